/**
 * GET /openapi.json: an OpenAPI 3.1 document of the three interfaces. Request bodies are generated with
 * zod's `z.toJSONSchema` from the very schemas the handlers validate with, so the document cannot drift
 * from what the hub accepts; the list of paths is written here, next to the router modules it mirrors.
 */
import { z } from 'zod';
import { packageDescriptor } from '../hub/descriptorSchema.js';
import { licenseSchema } from '../hub/license.js';
import { pushStateObjectBody, sendMessageBody } from './bodies.js';
import { ERRORS } from '../errors.js';
import {
  authorizationsBody,
  credentialBody,
  groupsBody,
  instanceBody,
  recoveryBody,
  sentinelBody,
  settingsBody,
} from './management/bodies.js';

const bodies = {
  SendMessage: sendMessageBody,
  PushStateObject: pushStateObjectBody,
  PackageDescriptor: packageDescriptor,
  License: licenseSchema,
  Sentinel: sentinelBody,
  PackageInstance: instanceBody,
  Credential: credentialBody,
  RecoveryOptions: recoveryBody,
  Groups: groupsBody,
  Settings: settingsBody,
  Authorizations: authorizationsBody,
} satisfies Record<string, z.ZodType>;

type BodyName = keyof typeof bodies;

interface Operation {
  method: 'get' | 'post' | 'delete';
  path: string;
  summary: string;
  query?: string[];
  body?: BodyName | 'xml' | 'multipart';
  /** Successful status; 200 with JSON unless said otherwise. */
  success?: 204 | 200 | 302;
}

const polling = ['subscriptionId', 'timeout', 'limit'];
const filters = ['sentinel', 'package', 'name', 'type'];

const shared = (prefix: string): Operation[] => [
  { method: 'get', path: `${prefix}/CheckAccess`, summary: 'Checks the three authentication values.' },
  {
    method: 'get',
    path: `${prefix}/SendMessage`,
    summary: 'Sends a message (query form).',
    query: ['scope', 'args', 'key', 'data', 'sagaId'],
    success: 204,
  },
  { method: 'post', path: `${prefix}/SendMessage`, summary: 'Sends a message.', body: 'SendMessage', success: 204 },
  {
    method: 'get',
    path: `${prefix}/SubscribeToMessage`,
    summary: 'Creates or renews a message subscription; answers its id.',
    query: ['subscriptionId'],
  },
  {
    method: 'get',
    path: `${prefix}/SubscribeToMessageGroup`,
    summary: 'Joins a message group.',
    query: ['group', 'subscriptionId'],
  },
  {
    method: 'get',
    path: `${prefix}/GetMessages`,
    summary: 'Long-polls the messages of a subscription.',
    query: polling,
  },
  {
    method: 'get',
    path: `${prefix}/RequestStateObjects`,
    summary: 'StateObjects matching the filters (`*` wildcards).',
    query: filters,
  },
  {
    method: 'get',
    path: `${prefix}/SubscribeToStateObjects`,
    summary: 'Subscribes to StateObjects matching the filters.',
    query: ['subscriptionId', ...filters],
  },
  {
    method: 'get',
    path: `${prefix}/GetStateObjects`,
    summary: 'Long-polls the StateObject changes of a subscription.',
    query: polling,
  },
];

const platform: Operation[] = [
  ...shared('/rest/platform'),
  {
    method: 'get',
    path: '/rest/platform/PushStateObject',
    summary: 'Pushes a StateObject (query form, value ≤ 8 KiB).',
    query: ['name', 'value', 'type', 'lifetime'],
    success: 204,
  },
  {
    method: 'post',
    path: '/rest/platform/PushStateObject',
    summary: 'Pushes a StateObject.',
    body: 'PushStateObject',
    success: 204,
  },
  {
    method: 'get',
    path: '/rest/platform/PurgeStateObjects',
    summary: "Purges the caller's own StateObjects.",
    query: ['name', 'type'],
    success: 204,
  },
  {
    method: 'get',
    path: '/rest/platform/WriteLog',
    summary: 'Writes a package log entry.',
    query: ['message', 'level'],
    success: 204,
  },
  { method: 'get', path: '/rest/platform/GetSettings', summary: "The instance's resolved settings." },
  {
    method: 'post',
    path: '/rest/platform/DeclarePackageDescriptor',
    summary: 'Declares the Package Descriptor.',
    body: 'PackageDescriptor',
    success: 204,
  },
];

const m = '/rest/management';
const instancePath = `${m}/sentinels/{sentinel}/packages/{package}`;
const management: Operation[] = [
  { method: 'get', path: `${m}/CheckAccess`, summary: 'Checks a management credential.' },
  { method: 'get', path: `${m}/server/version`, summary: "The hub's version." },
  {
    method: 'get',
    path: `${m}/server/status`,
    summary: 'Version, start time, uptime, waiting long-polls, request and record counts (for the console).',
  },
  {
    method: 'get',
    path: `${m}/overview`,
    summary: 'Sentinels and instances with connection, StateObject count, queued messages, last log (for the console).',
  },
  { method: 'get', path: `${m}/descriptors`, summary: 'Every declared Package Descriptor (for the console).' },
  { method: 'get', path: `${m}/configuration`, summary: 'The XML configuration file.' },
  {
    method: 'get',
    path: `${m}/configuration/applied`,
    summary: 'The configuration in force, serialized as XML (for the console).',
  },
  {
    method: 'post',
    path: `${m}/configuration`,
    summary: 'Validates and saves the XML configuration (not applied).',
    body: 'xml',
    success: 204,
  },
  {
    method: 'get',
    path: `${m}/configuration/reload`,
    summary: 'Applies the saved configuration.',
    query: ['deployConfiguration'],
  },
  { method: 'get', path: `${m}/configuration/recoveryoptions`, summary: 'The global recovery options.' },
  {
    method: 'post',
    path: `${m}/configuration/recoveryoptions`,
    summary: 'Sets the global recovery options.',
    body: 'RecoveryOptions',
  },
  { method: 'get', path: `${m}/license`, summary: 'The license.' },
  { method: 'post', path: `${m}/license`, summary: 'Sets the license.', body: 'License' },
  { method: 'get', path: `${m}/sentinels`, summary: 'Sentinels with their package instances.' },
  { method: 'post', path: `${m}/sentinels`, summary: 'Adds or modifies a sentinel.', body: 'Sentinel' },
  {
    method: 'delete',
    path: `${m}/sentinels/{sentinel}`,
    summary: 'Deletes a sentinel and its instances.',
    success: 204,
  },
  { method: 'get', path: `${m}/sentinels/{sentinel}/packages`, summary: "A sentinel's package instances." },
  {
    method: 'post',
    path: `${m}/sentinels/{sentinel}/packages`,
    summary: 'Adds or modifies a package instance.',
    body: 'PackageInstance',
  },
  { method: 'get', path: instancePath, summary: 'One package instance.' },
  { method: 'delete', path: instancePath, summary: 'Deletes a package instance.', success: 204 },
  { method: 'get', path: `${instancePath}/recoveryoptions`, summary: "The instance's recovery options." },
  {
    method: 'post',
    path: `${instancePath}/recoveryoptions`,
    summary: "Sets the instance's recovery options.",
    body: 'RecoveryOptions',
  },
  { method: 'get', path: `${instancePath}/groups`, summary: "The instance's groups." },
  { method: 'post', path: `${instancePath}/groups`, summary: "Replaces the instance's groups.", body: 'Groups' },
  { method: 'get', path: `${instancePath}/settings`, summary: "The instance's own settings." },
  { method: 'post', path: `${instancePath}/settings`, summary: "Replaces the instance's settings.", body: 'Settings' },
  { method: 'get', path: `${instancePath}/descriptor`, summary: "The instance's declared Package Descriptor." },
  { method: 'get', path: `${m}/credentials`, summary: 'Credentials.', query: ['includeAccessKeys'] },
  { method: 'post', path: `${m}/credentials`, summary: 'Adds or modifies a credential.', body: 'Credential' },
  { method: 'delete', path: `${m}/credentials/{credential}`, summary: 'Deletes a credential.', success: 204 },
  { method: 'get', path: `${m}/credentials/{credential}/authorizations`, summary: "A credential's authorizations." },
  {
    method: 'post',
    path: `${m}/credentials/{credential}/authorizations`,
    summary: "Replaces a credential's authorizations.",
    body: 'Authorizations',
  },
  {
    method: 'get',
    path: `${m}/logs`,
    summary: 'Package logs; with `after` and `timeout`, follows them (long-poll).',
    query: ['sentinel', 'package', 'level', 'since', 'limit', 'after', 'timeout'],
  },
  { method: 'get', path: `${m}/packages`, summary: 'The package repository.' },
  { method: 'get', path: `${m}/packages/{name}`, summary: 'One repository package.' },
  { method: 'post', path: `${m}/packages/{name}`, summary: 'Renames a repository package (`{"newName": "…"}`).' },
  { method: 'delete', path: `${m}/packages/{name}`, summary: 'Deletes a repository package.', success: 204 },
  { method: 'get', path: `${m}/packages/{name}/icon`, summary: "The package's icon (image/png)." },
  { method: 'get', path: `${m}/packages/{name}/settings/{setting}/xsd`, summary: "A setting's XSD (application/xml)." },
  {
    method: 'post',
    path: `${m}/download-package`,
    summary: 'Downloads a package archive from a URL (`{"url": "…"}`).',
  },
  {
    method: 'post',
    path: `${m}/upload-package`,
    summary: 'Uploads package archives (every file part, any field name, any or no part Content-Type).',
    body: 'multipart',
    success: 200,
  },
  {
    method: 'post',
    path: `${m}/UploadPackage`,
    summary:
      "Constellation's name for `upload-package` (the Console and ctln send the field `file`): the same action and answer.",
    body: 'multipart',
    success: 200,
  },
];

const operational: Operation[] = [
  { method: 'get', path: '/health', summary: 'Answers 200 while the process runs.' },
  { method: 'get', path: '/ready', summary: 'Answers 200 once the database and configuration are ready.' },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics (management values unless HUB_METRICS_OPEN).' },
  { method: 'get', path: '/openapi.json', summary: 'This document.' },
  { method: 'get', path: '/', summary: 'Redirects to the console.', success: 302 },
  { method: 'get', path: '/console/', summary: 'The web console.' },
];

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
  const operations = [...shared('/rest/consumer'), ...platform, ...management, ...operational];
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
