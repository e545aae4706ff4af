// The typed client (clients/typescript) against the test stack, with every answer checked: a
// middleware runs checkSuccessBody (./responses.ts) on a copy of each response, success or refusal,
// before the test sees it, as api.ts `call` does for the hand-built calls. An answer that drifts
// from docs/api/openapi.json or from its endpoint's response schema fails the test that got it.
import { createEscrowClient, type EscrowClient, type Middleware } from '../../clients/typescript/index.ts';
import { baseUrl } from './api.ts';
import { checkSuccessBody } from './responses.ts';

/** Checks each answer the client receives against the document and the endpoint's response schema. */
export const checkAnswers: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    const text = await response.clone().text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: checked as text (and refused by the document if it declares JSON) */
    }
    await checkSuccessBody(schemaPath, response.status, body, request.method);
    return undefined;
  },
};

/** A client of the test stack, as `token`'s owner when given; every answer is checked. */
export function testClient(token?: string): EscrowClient {
  const client = createEscrowClient({ baseUrl: baseUrl(), ...(token ? { accessToken: token } : {}) });
  client.use(checkAnswers);
  return client;
}
