import { endpoint } from '../../../shared/core/endpoint.ts';
import { operatorMode } from '../../../shared/operators/auth.ts';
import { adminSmsResend } from '../../../shared/operators/sms.ts';
import {
  SMS_NOT_FOUND,
  SMS_ONE_TIME_CODE,
  SMS_RESEND_LIMIT,
  SMS_TOO_OLD,
  SMS_WITHHELD,
} from '../../../shared/operators/refusals.ts';
import { adminSmsResendBody, adminSmsResendResponse } from '../../../shared/operators/schema.ts';

export default endpoint({
  name: 'admin-sms-resend',
  summary: 'Sends one message of the SMS outbox again, to the phone it was for',
  description:
    'Operators with the support role and a second-factor pass (to anyone else the function does not exist). Queues ' +
    "the same text again to the same phone (the message's own, never one from the request), sent after the commit " +
    'and retried by the job. Each SMS costs money, so one-time codes, messages withheld by a rule and messages ' +
    'over 24 hours old are not resent, and one message is resent at most 3 times (409 each); audited as ' +
    '`sms.resend`.',
  refusals: [SMS_NOT_FOUND, SMS_ONE_TIME_CODE, SMS_WITHHELD, SMS_TOO_OLD, SMS_RESEND_LIMIT],
  method: 'POST',
  auth: operatorMode(['support']),
  idempotent: true,
  repeat: 'queues the message again, one more of its 3 resends',
  body: adminSmsResendBody,
  response: adminSmsResendResponse,
  handler: ({ user, body }) => adminSmsResend(user, body),
});
