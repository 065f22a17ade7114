/**
 * The table of every path /openapi.json describes (written here, next to the router modules it mirrors)
 * and the zod schemas of the request bodies it names, the very ones the handlers validate with.
 */
import type { z } from 'zod';
import { packageDescriptor } from '../hub/packages/descriptorSchema.js';
import { licenseSchema } from '../hub/configuration/license.js';
import { pushStateObjectBody, sendMessageBody } from './bodies.js';
import {
  authorizationsBody,
  credentialBody,
  groupsBody,
  instanceBody,
  recoveryBody,
  sentinelBody,
  settingsBody,
} from './management/bodies.js';

export const bodies = {
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

export interface Operation {
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
    summary:
      "The answering process's version, start, uptime and own counts, the database's counts, the process list, and the answering process's SignalR connections (who, credential name, hubs, transport, since), in one answer (for the console).",
  },
  {
    method: 'get',
    path: `${m}/server/processes`,
    summary:
      'The hub processes sharing the database: addresses, host, pid, version, alive, and its own counts for each (for the console).',
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
  {
    method: 'get',
    path: `${m}/packages/{name}/archive`,
    summary: "The package's archive as uploaded (application/zip).",
  },
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
  {
    method: 'get',
    path: '/ready',
    summary:
      'Answers 200 while serving and the database answers; 503 with a Reason (starting, stopping, database unreachable) otherwise.',
  },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics (management values unless HUB_METRICS_OPEN).' },
  { method: 'get', path: '/openapi.json', summary: 'This document.' },
  { method: 'get', path: '/', summary: 'Redirects to the console.', success: 302 },
  { method: 'get', path: '/console/', summary: 'The web console.' },
];

/** Every operation, in the document's order. */
export const operations: Operation[] = [...shared('/rest/consumer'), ...platform, ...management, ...operational];
