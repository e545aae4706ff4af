// The operators' second factor (docs/operators.md#the-second-factor): enrolment and the pass.
// The secret is decrypted and the code compared here; the SQL records each try under the factor's
// row lock (private.operator_totp_try), so concurrent tries of one code pass once and every
// failure counts toward the lockout.
import { asService } from '../core/db.ts';
import { describeWait, retryAfterHeader } from '../core/http.ts';
import type { OperatorCaller } from './auth.ts';
import {
  TOTP_ALREADY_ACTIVE,
  TOTP_ENROLMENT_CLOSED,
  TOTP_INVALID,
  TOTP_LOCKED,
  TOTP_NOT_ENROLLED,
} from './refusals.ts';
import type { AdminTotpEnrolResponse, AdminTotpVerifyResponse } from './schema.ts';
import { matchingStep, newTotpSecret, openTotpSecret, otpauthUri, sealTotpSecret, totpKey } from './totp.ts';
import { qrSvg } from './qr.ts';

/** How long a pass lasts. */
export const PASS_SECONDS = 12 * 3600;

/** admin-totp-enrol: a new pending secret, answered this once as an otpauth URI and its QR code. */
export async function adminTotpEnrol(op: OperatorCaller): Promise<AdminTotpEnrolResponse> {
  const secret = newTotpSecret();
  const sealed = await sealTotpSecret(secret, await totpKey());
  const [row] = await asService((tx) =>
    tx<{ outcome: string }[]>`select private.operator_totp_enrol(${op.id}, ${sealed}) as outcome`
  );
  if (row?.outcome === 'active') throw TOTP_ALREADY_ACTIVE.error({});
  if (row?.outcome !== 'ok') throw TOTP_ENROLMENT_CLOSED.error({});
  const uri = otpauthUri(secret, op.phone);
  return { otpauth_uri: uri, qr_svg: qrSvg(uri) };
}

/** admin-totp-verify: one try of a code; a pass for this session's lineage when it is right. */
export async function adminTotpVerify(
  op: OperatorCaller,
  code: string,
  now = Date.now(),
): Promise<AdminTotpVerifyResponse> {
  const [factor] = await asService((tx) =>
    tx<{ secret_enc: string | null }[]>`
      select secret_enc from private.operator_factors where user_id = ${op.id} and status <> 'none'`
  );
  if (!factor?.secret_enc) throw TOTP_NOT_ENROLLED.error({});
  const step = await matchingStep(await openTotpSecret(factor.secret_enc, await totpKey()), code, now);
  const [row] = await asService((tx) =>
    tx<{ outcome: string; wait: number; expires_at: string | null }[]>`
      select t.outcome, t.wait, to_json(t.expires_at)#>>'{}' as expires_at
        from private.operator_totp_try(${op.id}, ${op.sessionId}, ${op.lineage}, ${step}, ${PASS_SECONDS}) t`
  );
  if (row?.outcome === 'ok' && row.expires_at) return { passed: true, expires_at: row.expires_at, roles: op.roles };
  if (row?.outcome === 'locked') {
    throw TOTP_LOCKED.error({ wait: describeWait(row.wait) }, { headers: retryAfterHeader(row.wait) });
  }
  if (row?.outcome === 'none') throw TOTP_NOT_ENROLLED.error({});
  throw TOTP_INVALID.error({});
}
