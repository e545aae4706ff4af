// The SMS provider adapter: Termii's send API in a deployment (SMS_PROVIDER=termii), none with the
// local outbox. Which messages are sent, when and with what text is the outbox's work
// (shared/messages/sms-outbox.ts).
import { providerFetch } from './outbound.ts';
import { getConfig } from './config.ts';
import { errorMessage, log } from './log.ts';

export interface SmsSender {
  send(phone: string, body: string): Promise<void>;
}

export class SmsError extends Error {
  override name = 'SmsError';
}

/** Termii: POST {base}/api/sms/send with the API key in the JSON body. */
export function termiiSender(opts: { baseUrl: string; apiKey: string; senderId: string; channel: string }): SmsSender {
  return {
    async send(phone, body) {
      let res: Response;
      try {
        res = await providerFetch(new URL('/api/sms/send', opts.baseUrl), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          body: JSON.stringify({
            api_key: opts.apiKey,
            to: phone.replace(/^\+/, ''),
            from: opts.senderId,
            sms: body,
            type: 'plain',
            channel: opts.channel,
          }),
          signal: AbortSignal.timeout(10_000),
        });
      } catch (err) {
        throw new SmsError(`termii unreachable: ${errorMessage(err)}`);
      }
      const payload = (await res.json().catch(() => ({}))) as { code?: string; message_id?: string; message?: string };
      if (!res.ok || payload.code !== 'ok') {
        throw new SmsError(`termii refused the message: HTTP ${res.status} ${payload.message ?? ''}`.trim());
      }
      log.info('sms.sent', { provider: 'termii', message_id: payload.message_id });
    },
  };
}

/** The provider that delivers queued messages: Termii, or none with the outbox (local work). */
export function smsSender(): SmsSender | null {
  const c = getConfig();
  if (c.SMS_PROVIDER !== 'termii') return null;
  return termiiSender({
    baseUrl: c.TERMII_BASE_URL,
    apiKey: c.TERMII_API_KEY as string,
    senderId: c.TERMII_SENDER_ID,
    channel: c.TERMII_CHANNEL,
  });
}
