// scripts/lib/local-host.ts: the host scripts/sms-code.ts checks is the one postgres.js connects to.
import { describe, expect, it } from 'vitest';
import { databaseHost, isLocalDatabaseUrl } from '../../scripts/lib/local-host.ts';

describe('databaseHost and isLocalDatabaseUrl', () => {
  it('accept 127.0.0.1, localhost and ::1, whatever the port, user, case or query', () => {
    for (
      const [url, host] of [
        ['postgres://postgres:postgres@127.0.0.1:54322/postgres', '127.0.0.1'],
        ['postgresql://localhost/escrow', 'localhost'],
        ['postgres://u:p@LocalHost:5433/db?sslmode=disable', 'localhost'],
        ['postgres://u:p@[::1]:5432/db', '::1'],
        ['postgres://u:p%40x@127.0.0.1/db', '127.0.0.1'],
      ]
    ) {
      expect(databaseHost(url as string), url).toBe(host);
      expect(isLocalDatabaseUrl(url as string), url).toBe(true);
    }
  });

  it('refuse any other host, several hosts, no host, and what is not a postgres URL', () => {
    for (
      const [url, host] of [
        [
          'postgres://postgres.abc:pw@aws-0-eu-west-2.pooler.supabase.com:6543/postgres',
          'aws-0-eu-west-2.pooler.supabase.com',
        ],
        ['postgres://u:p@127.0.0.1.example.com/db', '127.0.0.1.example.com'],
        ['postgres://u:p%40127.0.0.1@db.example.com/db', 'db.example.com'],
        ['postgres://u:p@10.0.0.5/db', '10.0.0.5'],
        ['postgres://127.0.0.1:5432,db.example.com:5432/db', undefined],
        ['postgres:///db', undefined],
        ['mysql://localhost/db', undefined],
        ['127.0.0.1:5432', undefined],
        ['', undefined],
      ]
    ) {
      expect(databaseHost(url as string), url).toBe(host);
      expect(isLocalDatabaseUrl(url as string), url).toBe(false);
    }
  });
});
