// admin-sms-resend (docs/operators.md#resending-an-sms): support queues one message of the SMS
// outbox again, to the phone it was for, and it is sent after the commit. private.sms_resend
// refuses what should not cost another SMS: one-time codes, withheld messages, messages over 24
// hours old, a fourth resend of one message.
import { afterCommit } from '../core/background.ts';
import { asService } from '../core/db.ts';
import { dispatchQueuedSms } from '../messages/sms-outbox.ts';
import type { OperatorCaller } from './auth.ts';
import { recordAudit } from './audit.ts';
import type { AdminSmsResendResponse } from './schema.ts';

export async function adminSmsResend(
  op: OperatorCaller,
  body: { sms_id: number; reason: string },
): Promise<AdminSmsResendResponse> {
  const row = await asService(async (tx) => {
    const [r] = await tx<{ sms_id: string; resend_of: string; kind: string; resends: number }[]>`
      select * from private.sms_resend(${body.sms_id})`;
    await recordAudit(tx, op, {
      action: 'sms.resend',
      roles: ['support'],
      targetType: 'sms',
      targetId: null,
      reason: body.reason,
      facts: { sms_id: Number(r!.resend_of), resent_as: Number(r!.sms_id), kind: r!.kind, resends: r!.resends },
    });
    return r!;
  });
  const id = Number(row.sms_id);
  await afterCommit('sms.resend', () => dispatchQueuedSms(1, id));
  return {
    sms_id: id,
    resend_of: Number(row.resend_of),
    kind: row.kind,
    resends: row.resends,
  };
}
