// docs/security.md, "Input, headers and the local server": a JSON body may nest arrays and objects
// at most 32 levels deep. A deeper one is a 400 validation_failed naming `body`, checked on the raw
// text before anything walks the parsed value (3,000 levels in 6 KB once exhausted the stack: a 500).
import { describe, expect, it } from 'vitest';
import { type ApiResult, postRaw } from '../support/api.ts';
import { newPhone, signUp } from '../support/users.ts';
import authSendOtp from '../../supabase/functions/auth-send-otp/handler.ts';
import profileUpdate from '../../supabase/functions/profile-update/handler.ts';

const DEPTH_MESSAGE = 'must not nest arrays and objects more than 32 levels deep';

/** A body object whose field `key` holds arrays nested so that the whole body is `levels` deep. */
function nested(fields: Record<string, unknown>, key: string, levels: number): string {
  const inner = '['.repeat(levels - 1) + ']'.repeat(levels - 1);
  const json = JSON.stringify({ ...fields, [key]: '__inner__' });
  return json.replace('"__inner__"', inner);
}

function tooDeep(r: ApiResult) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body).toMatchObject({ success: false, status: 400, code: 'validation_failed' });
  expect(r.body.details).toEqual([{ field: 'body', message: DEPTH_MESSAGE }]);
}

function notRefusedForDepth(r: ApiResult) {
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
  expect(JSON.stringify(r.body.details ?? [])).not.toContain('levels deep');
}

const json = { headers: { 'Content-Type': 'application/json' } };

describe('auth-send-otp', () => {
  describe('nesting depth', () => {
    it('refuses 33 levels and 3,000 levels with a 400 naming body; 32 levels are not refused for depth', async () => {
      const fields = { phone: newPhone().local, context: 'signup' };
      tooDeep(await postRaw(authSendOtp, nested(fields, 'extra', 33), json));
      const huge = '['.repeat(3000) + ']'.repeat(3000);
      expect(huge.length).toBe(6000);
      tooDeep(await postRaw(authSendOtp, huge, json));
      // brackets inside strings (escaped quotes too) are text, not nesting
      const text = JSON.stringify({ ...fields, extra: `\\"${'['.repeat(3000)}` });
      const inString = await postRaw(authSendOtp, text, json);
      notRefusedForDepth(inString);
      expect(inString.body.details).toEqual([{ field: 'extra', message: 'is not an accepted field' }]);
      const at32 = await postRaw(authSendOtp, nested(fields, 'extra', 32), json);
      notRefusedForDepth(at32);
      expect(at32.body.details).toEqual([{ field: 'extra', message: 'is not an accepted field' }]);
    });
  });
});

describe('profile-update', () => {
  describe('nesting depth', () => {
    it('refuses 33 levels and 3,000 levels for a signed-in caller; 32 levels reach the schema', async () => {
      const { accessToken: token } = await signUp();
      tooDeep(await postRaw(profileUpdate, nested({}, 'bio', 33), { ...json, token, method: 'PATCH' }));
      const huge = `{"bio":${'{"a":'.repeat(2999)}1${'}'.repeat(2999)}}`;
      tooDeep(await postRaw(profileUpdate, huge, { ...json, token, method: 'PATCH' }));
      const at32 = await postRaw(profileUpdate, nested({}, 'bio', 32), { ...json, token, method: 'PATCH' });
      notRefusedForDepth(at32);
      expect(at32.body.details).toEqual([{ field: 'bio', message: expect.stringMatching(/must be a string/) }]);
    });
  });
});
