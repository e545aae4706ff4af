// The typed client (clients/typescript) against the test stack, with every answer checked: a
// middleware runs checkSuccessBody (./responses.ts) on a copy of each response, success or refusal,
// before the test sees it, as api.ts `call` does for the hand-built calls. An answer that drifts
// from docs/api/openapi.json or from its endpoint's response schema fails the test that got it.
import { createEscrowClient, type EscrowClient, type Middleware } from '../../clients/typescript/index.ts';
import { baseUrl } from './api.ts';
import { checkSuccessBody } from './responses.ts';

/** Checks one answer (read from a copy) against the document and the endpoint's response schema. */
async function checkAnswer(target: string, method: string, response: Response): Promise<void> {
  const text = await response.clone().text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: checked as text (and refused by the document, which declares JSON) */
  }
  await checkSuccessBody(target, response.status, body, method, response.headers);
}

/** openapi-fetch middleware: checks each answer the client receives. */
export const checkAnswers: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    await checkAnswer(schemaPath, request.method, response);
    return undefined;
  },
};

/** A fetch for code that builds its own client (the README example): checks each answer too. */
export async function checkedFetch(request: Request): Promise<Response> {
  const response = await fetch(request);
  await checkAnswer(new URL(request.url).pathname, request.method, response);
  return response;
}

/** A client of the test stack, as `token`'s owner when given; every answer is checked. */
export function testClient(token?: string): EscrowClient {
  const client = createEscrowClient({ baseUrl: baseUrl(), ...(token ? { accessToken: token } : {}) });
  client.use(checkAnswers);
  return client;
}
