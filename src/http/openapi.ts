/**
 * GET /openapi.json: an OpenAPI 3.1 document of the three interfaces. Request bodies are generated with
 * zod's `z.toJSONSchema` from the very schemas the handlers validate with, so the document cannot drift
 * from what the hub accepts; the list of paths and bodies is in openapiPaths.ts.
 */
import { z } from 'zod';
import { ERRORS } from '../errors.js';
import type { Operation } from './openapiPaths.js';
import { bodies, operations } from './openapiPaths.js';

const tagOf = (path: string) => (path.startsWith('/rest/') ? path.split('/')[2] : 'operations');

function operationObject(op: Operation) {
  const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const queryParams = (op.query ?? []).map((name) => ({
    name,
    in: 'query',
    required: false,
    schema: { type: 'string' },
  }));
  const auth = op.path.startsWith('/rest/') ? [{ Query: [] }, { Headers: [] }] : undefined;
  const requestBody =
    op.body === 'xml'
      ? { required: true, content: { 'application/xml': { schema: { type: 'string' } } } }
      : op.body === 'multipart'
        ? {
            required: true,
            content: {
              'multipart/form-data': {
                schema: { type: 'object', additionalProperties: { type: 'string', format: 'binary' } },
              },
            },
          }
        : op.body
          ? { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.body}` } } } }
          : undefined;
  const success = op.success ?? 200;
  return {
    tags: [tagOf(op.path)],
    summary: op.summary,
    ...(pathParams.length + queryParams.length > 0 ? { parameters: [...pathParams, ...queryParams] } : {}),
    ...(requestBody ? { requestBody } : {}),
    ...(auth ? { security: auth } : {}),
    responses: {
      [success]: { description: success === 204 ? 'Done (after commit).' : success === 302 ? 'Redirect.' : 'Success.' },
      default: {
        description: 'An error.',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  };
}

function schemaOf(schema: z.ZodType): Record<string, unknown> {
  // Input shapes: what a client sends. Transforms (to the hub's own model) have no JSON Schema form.
  const { $schema, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  void $schema;
  return rest;
}

export function openApiDocument(version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) (paths[op.path] ??= {})[op.method] = operationObject(op);
  const schemas: Record<string, unknown> = Object.fromEntries(
    Object.entries(bodies).map(([name, schema]) => [name, schemaOf(schema)]),
  );
  schemas.Error = {
    type: 'object',
    required: ['Message', 'Code'],
    properties: {
      Message: { type: 'string' },
      MessageDetail: { type: 'string' },
      Code: {
        type: 'string',
        enum: Object.keys(ERRORS),
        description: 'Stable: compare it, never Message. docs/api.md gives each code its status and meaning.',
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'The hub',
      version,
      description:
        'Consumer, virtual package (platform, alias constellation) and management interfaces. Action names are case-insensitive. See docs/api.md.',
    },
    tags: [
      { name: 'consumer', description: 'Consumers: SentinelName=Consumer, any PackageName, any enabled credential.' },
      { name: 'platform', description: 'Virtual packages (also served as /rest/constellation).' },
      { name: 'management', description: 'Administration: a credential with EnableManagementAPI.' },
      { name: 'operations', description: 'Outside the interfaces.' },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        Query: {
          type: 'apiKey',
          in: 'query',
          name: 'AccessKey',
          description: 'With SentinelName and PackageName as query parameters too.',
        },
        Headers: {
          type: 'apiKey',
          in: 'header',
          name: 'AccessKey',
          description: 'With SentinelName and PackageName headers.',
        },
      },
    },
  };
}
