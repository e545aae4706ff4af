// SMS through an adapter: `outbox` stores every message in private.sms_outbox (local work and
// tests; the local server prints it), `termii` calls Termii's send API.
import { getConfig } from './config.ts';
import { asService } from './db.ts';
import { errorMessage, log } from './log.ts';

export interface SmsSender {
  send(phone: string, body: string): Promise<void>;
}

export class SmsError extends Error {
  override name = 'SmsError';
}

const outbox: SmsSender = {
  async send(phone, body) {
    await asService((tx) => tx`insert into private.sms_outbox (phone, body) values (${phone}, ${body})`);
    // Local only: the outbox exists so a developer can read the codes.
    console.log(`[sms outbox] to ${phone}: ${body}`);
  },
};

/**
 * Sends the SMS that transitions queued in private.sms_outbox (sent_at null) in their own
 * transactions. Rows are claimed with SKIP LOCKED, so concurrent dispatchers never send one twice.
 * In outbox mode "sending" is marking the row delivered (and printing it).
 */
export async function dispatchQueuedSms(limit = 20): Promise<number> {
  const c = getConfig();
  const sender = c.SMS_PROVIDER === 'termii' ? smsSender() : null;
  return await asService(async (tx) => {
    const rows = await tx<{ id: number; phone: string; body: string }[]>`
      select id, phone, body from private.sms_outbox
       where sent_at is null and withheld is null and attempts < 5 and (expires_at is null or expires_at > now())
       order by id limit ${limit} for update skip locked`;
    let sent = 0;
    for (const row of rows) {
      try {
        if (sender) await sender.send(row.phone, row.body);
        else console.log(`[sms outbox] to ${row.phone}: ${row.body}`);
        await tx`update private.sms_outbox set sent_at = now(), attempts = attempts + 1 where id = ${row.id}`;
        sent++;
      } catch (err) {
        log.warn('sms.dispatch_failed', { sms_id: row.id, error: errorMessage(err) });
        await tx`update private.sms_outbox set attempts = attempts + 1, last_error = ${errorMessage(err)} where id = ${row.id}`;
      }
    }
    return sent;
  });
}

/** Termii: POST {base}/api/sms/send with the API key in the JSON body. */
export function termiiSender(opts: { baseUrl: string; apiKey: string; senderId: string; channel: string }): SmsSender {
  return {
    async send(phone, body) {
      let res: Response;
      try {
        res = await fetch(new URL('/api/sms/send', opts.baseUrl), {
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

export function smsSender(): SmsSender {
  const c = getConfig();
  if (c.SMS_PROVIDER === 'termii') {
    return termiiSender({
      baseUrl: c.TERMII_BASE_URL,
      apiKey: c.TERMII_API_KEY as string,
      senderId: c.TERMII_SENDER_ID,
      channel: c.TERMII_CHANNEL,
    });
  }
  return outbox;
}
