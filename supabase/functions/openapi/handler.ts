import { z } from 'zod';
import { endpoint } from '../../../shared/core/endpoint.ts';
import document from '../../../docs/api/openapi.json' with { type: 'json' };

/** The document's top level (its operations and schemas are checked by tests/unit/openapi.test.ts). */
const openApiDocumentSchema = z.strictObject({
  openapi: z.literal('3.1.0'),
  jsonSchemaDialect: z.string(),
  info: z.strictObject({ title: z.string(), version: z.string(), description: z.string() }),
  servers: z.array(z.record(z.string(), z.unknown())),
  tags: z.array(z.strictObject({ name: z.string(), description: z.string() })),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  components: z.strictObject({
    schemas: z.record(z.string(), z.unknown()),
    securitySchemes: z.record(z.string(), z.unknown()),
  }),
});

// The OpenAPI 3.1 document, as committed (npm run openapi builds it from the endpoint definitions;
// tests/unit/openapi.test.ts fails when it is stale). The bare document, not in the envelope, as
// OpenAPI readers and the reference page (docs/api/) expect.
export default endpoint({
  name: 'openapi',
  summary: 'The OpenAPI 3.1 document of this API',
  description: 'Anyone, without a token. The bare document (no envelope), the same as `docs/api/openapi.json` in the ' +
    'repository; it changes nothing.',
  method: 'GET',
  auth: 'none',
  envelope: false,
  response: openApiDocumentSchema,
  handler: () => Promise.resolve(document as z.input<typeof openApiDocumentSchema>),
});
