// Uses the stack that `npm test` started (TEST_BASE_URL / TEST_DATABASE_URL), or starts one for
// a direct `npx vitest` run. Listed in the root config of vitest.config.ts only, so it runs once per
// run whatever projects take part; both projects inherit what it provides.
import type { TestProject } from 'vitest/node';
import { type Stack, startStack } from './stack.ts';

let stack: Stack | undefined;

export async function setup(project: TestProject) {
  let baseUrl = process.env.TEST_BASE_URL;
  let databaseUrl = process.env.TEST_DATABASE_URL;
  let fakePaystackUrl = process.env.TEST_FAKE_PAYSTACK_URL;
  let fakeKycUrl = process.env.TEST_FAKE_KYC_URL;
  if (!baseUrl || !databaseUrl || !fakePaystackUrl) {
    stack = await startStack();
    baseUrl = stack.baseUrl;
    databaseUrl = stack.databaseUrl;
    fakePaystackUrl = stack.fakePaystackUrl;
    fakeKycUrl = stack.fakeKycUrl;
  }
  // A runner that passes the three addresses above but not TEST_FAKE_KYC_URL started its stack with
  // startStack() too, which puts the KYC fake on the port after Paystack's.
  fakeKycUrl ??= `http://127.0.0.1:${Number(new URL(fakePaystackUrl).port) + 1}`;
  project.provide('baseUrl', baseUrl);
  project.provide('databaseUrl', databaseUrl);
  project.provide('fakePaystackUrl', fakePaystackUrl);
  project.provide('fakeKycUrl', fakeKycUrl);
  // the functions server's output (its JSON log lines): '' when the runner did not say where it is
  project.provide('serverLog', process.env.TEST_SERVER_LOG ?? stack?.logFile ?? '');
}

export async function teardown() {
  await stack?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    databaseUrl: string;
    fakePaystackUrl: string;
    fakeKycUrl: string;
    serverLog: string;
  }
}
