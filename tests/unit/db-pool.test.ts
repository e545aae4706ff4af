// DB_POOL_MAX: how many connections one function instance may hold. A deployment runs many
// instances, each with its own pool, through Supabase's transaction pooler: 2 unless set. The
// local stack serves every function from one process: 10 unless set.
import { describe, expect, it } from 'vitest';
import { ConfigError, DB_POOL_DEFAULT, parseConfig } from '../../shared/core/config.ts';
import { TEST_SECRETS } from '../../shared/core/published-secrets.ts';
import { deployment } from '../support/deployment.ts';

const localStack = (): Record<string, string | undefined> => ({
  ...TEST_SECRETS,
  DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:54322/postgres',
  ESCROW_LOCAL_STACK: '1',
});

function refusal(env: Record<string, string | undefined>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return [];
}

describe('DB_POOL_MAX', () => {
  it('is 2 in a deployment and 10 on the local stack when unset (or empty)', () => {
    expect(DB_POOL_DEFAULT).toEqual({ deployment: 2, local: 10 });
    expect(parseConfig(deployment()).DB_POOL_MAX).toBe(2);
    expect(parseConfig({ ...deployment(), DB_POOL_MAX: '' }).DB_POOL_MAX).toBe(2);
    expect(parseConfig(localStack()).DB_POOL_MAX).toBe(10);
  });

  it('takes the value given, in either place', () => {
    expect(parseConfig({ ...deployment(), DB_POOL_MAX: '1' }).DB_POOL_MAX).toBe(1);
    expect(parseConfig({ ...localStack(), DB_POOL_MAX: '20' }).DB_POOL_MAX).toBe(20);
  });

  it('refuses 0, a fraction or a word, by name', () => {
    for (const bad of ['0', '1.5', 'two']) {
      const found = refusal({ ...deployment(), DB_POOL_MAX: bad });
      expect(found.length, bad).toBe(1);
      expect(found[0], bad).toMatch(/^DB_POOL_MAX /);
    }
  });
});
