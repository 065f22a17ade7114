/**
 * Property-based bad input over every endpoint of the three interfaces: random and hostile query
 * values, headers, bodies, content types and path names. Every answer must be a 2xx or a 4xx JSON error
 * (the documented 500 for a lost subscription aside), a refused request must change nothing stored,
 * and the database must stay intact. HUB_FUZZ_RUNS sets the number of requests (`npm run test:fuzz`).
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, DEV_KEY, startTestHub } from './support/testHub.js';

const RUNS = Number(process.env.HUB_FUZZ_RUNS ?? 300);

let hub: Awaited<ReturnType<typeof startTestHub>>;
let reader: Database.Database;
const subscriptionIds: string[] = [];

beforeAll(async () => {
  hub = await startTestHub({ options: { bodyLimitBytes: 64 * 1024, authFailureStepMs: 0 } });
  const subscribe = async (action: string) =>
    (await (
      await fetch(`${hub.url}/rest/consumer/${action}?SentinelName=Consumer&PackageName=Fuzz&AccessKey=${DEV_KEY}`)
    ).json()) as string;
  subscriptionIds.push(await subscribe('SubscribeToMessage'), await subscribe('SubscribeToStateObjects'));
  reader = new Database(path.join(hub.dataDir, 'hub.db'), { readonly: true });
});
afterAll(async () => {
  reader?.close();
  await hub?.stop();
});

/** A digest of everything stored that a request could change (idle clocks and the heartbeat aside). */
function storedState(): string {
  const queries = [
    'select * from state_objects order by 1,2,3',
    'select id, kind, owner_connection_id, credential_name, queued_messages from subscriptions order by id',
    'select * from state_object_filters order by id',
    'select * from state_object_changes order by id',
    'select * from message_group_members order by 1,2',
    'select * from messages order by id',
    'select * from message_deliveries order by id',
    'select * from callers order by 1',
    'select * from package_instance_groups order by 1,2,3',
    'select id, written_by, reason, applied, text from configuration_versions order by id',
    'select * from package_logs order by id',
    'select * from package_descriptors order by 1,2',
    'select name, sha256 from repository_packages order by 1',
    "select * from hub_settings where key != 'heartbeat_ms' order by 1",
  ];
  const hash = createHash('sha256');
  for (const q of queries) hash.update(JSON.stringify(reader.prepare(q).all()));
  return hash.digest('hex');
}

const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    '*',
    '../../etc/passwd',
    '..%2F..%2F',
    '%00',
    'a/b',
    'Consumer',
    'S1',
    'P1',
    'null',
    'true',
    '[',
    '{',
    "{ a: 'b', }",
    '1e309',
    '-1',
    '0',
    '99999999999999999999',
    'All',
    'Package',
    '\u0000\u0001',
    '\u202e',
    '🙂'.repeat(20),
  ),
  // Names of Object.prototype members, and NUL inside or after a real name.
  fc.constantFrom(
    'constructor',
    '__proto__',
    'toString',
    'hasOwnProperty',
    'valueOf',
    'prototype',
    'P1\u0000',
    'Keep\u0000x',
    '*\u0000',
    'S1%00',
  ),
  fc.string({ minLength: 500, maxLength: 3000 }),
);

const deepJson = fc.integer({ min: 1, max: 200 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth));
const jsonBody = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        Scope: fc.record(
          { Scope: fc.oneof(fc.string(), fc.integer()), Args: fc.array(fc.string()) },
          { requiredKeys: [] },
        ),
        Key: fc.string(),
        Data: fc.jsonValue(),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        Name: hostileText,
        Value: fc.jsonValue(),
        Type: fc.string(),
        Lifetime: fc.oneof(fc.integer(), fc.double(), fc.string()),
        Metadatas: fc.dictionary(fc.string(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  deepJson,
  hostileText,
  fc.constantFrom(
    '{"__proto__":{"polluted":"yes"}}',
    '{"Name":"N","Value":1,"Metadatas":{"__proto__":{"polluted":"yes"}}}',
    '{"Name":"N","Value":1,"Metadatas":{"constructor":"c","ChipId":10976213}}',
    '{"Scope":{"Scope":"constructor"},"Key":"K"}',
    '{"Scope":{"Scope":"All"},"Key":"K\\u0000x"}',
    "{constructor:{prototype:{polluted:'yes'}}}",
  ),
);

const actions = {
  consumer: [
    'CheckAccess',
    'SendMessage',
    'SubscribeToMessage',
    'SubscribeToMessageGroup',
    'GetMessages',
    'RequestStateObjects',
    'SubscribeToStateObjects',
    'GetStateObjects',
  ],
  platform: ['PushStateObject', 'PurgeStateObjects', 'WriteLog', 'GetSettings', 'DeclarePackageDescriptor'],
  management: [
    'CheckAccess',
    'server/version',
    'configuration',
    'configuration/reload',
    'configuration/recoveryoptions',
    'license',
    'sentinels',
    'credentials',
    'logs',
    'packages',
    'upload-package',
  ],
};
const managementTemplates = [
  'sentinels/{a}',
  'sentinels/{a}/packages',
  'sentinels/{a}/packages/{b}',
  'sentinels/{a}/packages/{b}/settings',
  'sentinels/{a}/packages/{b}/groups',
  'sentinels/{a}/packages/{b}/recoveryoptions',
  'sentinels/{a}/packages/{b}/descriptor',
  'credentials/{a}',
  'credentials/{a}/authorizations',
  'packages/{a}',
  'packages/{a}/icon',
  'packages/{a}/archive',
  'packages/{a}/settings/{b}/xsd',
  'upload-package',
  // download-package is left out on purpose: a random URL must never become traffic off this machine.
];

const identities = {
  consumer: { SentinelName: 'Consumer', PackageName: 'Fuzz', AccessKey: DEV_KEY },
  platform: { SentinelName: 'S1', PackageName: 'P1', AccessKey: DEV_KEY },
  management: { SentinelName: 'Management', PackageName: 'Fuzz', AccessKey: ADMIN_KEY },
};

const request = fc.record({
  iface: fc.constantFrom('consumer', 'platform', 'constellation', 'management'),
  actionPick: fc.nat(),
  template: fc.constantFrom(...managementTemplates),
  names: fc.tuple(hostileText, hostileText),
  randomAction: fc.oneof({ arbitrary: fc.constant(null), weight: 9 }, { arbitrary: hostileText, weight: 1 }),
  useSubscription: fc.nat(3),
  method: fc.constantFrom('GET', 'GET', 'GET', 'POST', 'POST', 'DELETE', 'PUT'),
  authenticated: fc.boolean(),
  identityOverride: fc.record(
    { SentinelName: hostileText, PackageName: hostileText, AccessKey: hostileText },
    { requiredKeys: [] },
  ),
  authInHeaders: fc.boolean(),
  query: fc.dictionary(
    fc.constantFrom(
      'name',
      'value',
      'type',
      'lifetime',
      'scope',
      'args',
      'key',
      'data',
      'sagaId',
      'subscriptionId',
      'timeout',
      'limit',
      'group',
      'sentinel',
      'package',
      'message',
      'level',
      'includeAccessKeys',
      'deployConfiguration',
      'since',
      'after',
      'x',
    ),
    hostileText,
    { maxKeys: 6 },
  ),
  body: fc.option(jsonBody, { freq: 2 }),
  contentType: fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/xml',
    'multipart/form-data',
    'application/x-www-form-urlencoded',
    '',
  ),
  extraHeader: fc.option(
    fc.tuple(
      fc.constantFrom('X-Fuzz', 'Accept', 'Origin'),
      fc.string({ maxLength: 100 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
    ),
  ),
});

describe('hostile input', () => {
  it(
    `answers ${RUNS} random requests with 2xx or a 4xx JSON error, changing nothing when refused`,
    async () => {
      const counts: Record<string, number> = {};
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const base = r.iface === 'constellation' ? 'platform' : r.iface;
          const pool =
            base === 'platform'
              ? [...actions.consumer, ...actions.platform]
              : actions[base as 'consumer' | 'management'];
          let action = r.randomAction ?? pool[r.actionPick % pool.length];
          if (base === 'management' && r.actionPick % 3 === 0) {
            action = r.template
              .replace('{a}', encodeURIComponent(r.names[0]))
              .replace('{b}', encodeURIComponent(r.names[1]));
          } else if (r.randomAction !== null) {
            action = encodeURIComponent(action);
          }
          const identity = {
            ...(r.authenticated ? identities[base as keyof typeof identities] : {}),
            ...(r.authenticated ? {} : r.identityOverride),
          };
          const url = new URL(`${hub.url}/rest/${r.iface}/${action}`);
          for (const [k, v] of Object.entries(r.query)) url.searchParams.set(k, v);
          if (r.query.timeout === undefined) url.searchParams.set('timeout', '0');
          if (r.useSubscription < subscriptionIds.length)
            url.searchParams.set('subscriptionId', subscriptionIds[r.useSubscription]);
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(identity)) {
            if (r.authInHeaders && /^[\x20-\x7e]*$/.test(v)) headers[k] = v;
            else url.searchParams.set(k, v);
          }
          if (r.extraHeader) headers[r.extraHeader[0]] = r.extraHeader[1];
          const withBody = r.method === 'POST' || r.method === 'PUT';
          if (withBody && r.contentType) headers['Content-Type'] = r.contentType;
          const before = storedState();
          let response: Response;
          try {
            // A valid long-poll (a logs follow with a long timeout) may wait: that is not a failure.
            response = await fetch(url, {
              method: r.method,
              headers,
              body: withBody ? (r.body ?? '') : undefined,
              signal: AbortSignal.timeout(1500),
            });
          } catch (error) {
            if ((error as Error).name === 'TimeoutError') {
              counts.waited = (counts.waited ?? 0) + 1;
              return;
            }
            throw error;
          }
          const text = await response.text();
          const status = response.status;
          counts[String(status)] = (counts[String(status)] ?? 0) + 1;
          const lostSubscription = status === 500 && /does not exist or has expired/.test(text);
          expect(
            (status >= 200 && status < 500) || lostSubscription,
            `${r.method} ${url.pathname} → ${status} ${text.slice(0, 200)}`,
          ).toBe(true);
          if (status >= 400) {
            expect(response.headers.get('content-type') ?? '', `${url.pathname} ${status}`).toMatch(
              /application\/json/,
            );
            expect(typeof (JSON.parse(text) as { Message: unknown }).Message).toBe('string');
            expect(storedState(), `${r.method} ${url.pathname} was refused (${status}) but changed stored data`).toBe(
              before,
            );
          }
        }),
        { numRuns: RUNS },
      );
      console.log('fuzz statuses:', JSON.stringify(counts));
      expect(({} as Record<string, unknown>).polluted, 'Object.prototype was polluted').toBeUndefined();
      expect((await fetch(`${hub.url}/health`)).status).toBe(200);
      expect(reader.pragma('integrity_check', { simple: true })).toBe('ok');
    },
    120_000 + RUNS * 100,
  );
});
