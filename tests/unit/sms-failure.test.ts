// With Termii unreachable, sending a code is a 503 the client can act on (never a bare 500).
import { describe, expect, it } from 'vitest';

describe('sendOrExplain with SMS_PROVIDER=termii and Termii down', () => {
  it('turns the provider failure into a 503 HttpError', async () => {
    // this file runs in its own process: configure it before anything reads the configuration
    process.env.SMS_PROVIDER = 'termii';
    process.env.TERMII_API_KEY = 'TL-unit-test';
    process.env.TERMII_BASE_URL = 'http://127.0.0.1:9';
    const { sendOrExplain } = await import('../../shared/auth/otp.ts');
    const { HttpError } = await import('../../shared/http.ts');
    const err = await sendOrExplain('+2348012345678', 'Your code is 123456').then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as InstanceType<typeof HttpError>).status).toBe(503);
    expect((err as Error).message).not.toContain('TL-unit-test');
  });
});
