/** Test support: a real hub on an ephemeral port over a real SQLite file in a temp directory. */
import fs from 'node:fs';
import { afterEach } from 'vitest';
import type { HubConfiguration, PackageInstance } from '../../src/config/model.js';
import { defaultRecoveryOptions, openAuthorizations } from '../../src/config/model.js';
import { serializeConfiguration } from '../../src/config/xmlFile.js';
import type { Hub } from '../../src/createHub.js';
import { startHub } from '../../src/createHub.js';
import { createLogger } from '../../src/logger.js';
import type { HubOptions } from '../../src/settings.js';
import { hubOptions } from '../../src/settings.js';
import { afterFile, tempDir } from './afterFile.js';

export { tempDir };

export const ADMIN_KEY = 'admin-key-0001';
export const DEV_KEY = 'dev-key-0001';
export const OTHER_KEY = 'other-key-0001';

export const instance = (name: string, extra: Partial<PackageInstance> = {}): PackageInstance => ({
  name,
  enable: true,
  autoStart: true,
  settings: [],
  imports: [],
  groups: [],
  ...extra,
});

/** Admin (management), Dev (sentinel S1 with P1, P2), Other (sentinel S2 with P1), Disabled, NoRights. */
export function testConfiguration(): HubConfiguration {
  const credential = (
    name: string,
    accessKey: string,
    extra: Partial<HubConfiguration['credentials'][number]> = {},
  ) => ({
    name,
    accessKey,
    enable: true,
    enableControlHub: false,
    enableManagementAPI: false,
    enableDeveloperAccess: false,
    authorizations: openAuthorizations(),
    ...extra,
  });
  return {
    listenUris: ['http://+:8088/'],
    recoveryOptions: { ...defaultRecoveryOptions },
    credentials: [
      credential('Admin', ADMIN_KEY, { enableManagementAPI: true, enableControlHub: true }),
      credential('Dev', DEV_KEY),
      credential('Other', OTHER_KEY),
      credential('Disabled', 'disabled-key-0001', { enable: false }),
    ],
    sentinels: [
      { name: 'S1', credential: 'Dev', packages: [instance('P1', { groups: ['Lights'] }), instance('P2')] },
      { name: 'S2', credential: 'Other', packages: [instance('P1')] },
    ],
    settingsGroups: [],
  };
}

/** Writes a configuration file as the hub does: readable by its owner only (it holds the keys). */
export function writeConfiguration(file: string, config: HubConfiguration | string = testConfiguration()): void {
  fs.writeFileSync(file, typeof config === 'string' ? config : serializeConfiguration(config), { mode: 0o600 });
}

/** The configuration file's text as it is now. */
export const configFileText = (h: { options: HubOptions }) => fs.readFileSync(h.options.configPath, 'utf8');

export interface TestHubOptions {
  dataDir?: string;
  config?: HubConfiguration | string | null;
  options?: Partial<HubOptions>;
}

/**
 * Starts a hub; writes the configuration file first unless `config` is null (first start). The hub
 * stops and its directory goes when the test file ends, if the test did not stop it.
 */
export async function startTestHub(opts: TestHubOptions = {}): Promise<Hub & { dataDir: string; options: HubOptions }> {
  const dataDir = opts.dataDir ?? tempDir();
  const options = hubOptions({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    authFailureDelayMs: 0,
    // Tests fail authentication on purpose many times from 127.0.0.1; the block past the limit has its own test.
    authFailureLimit: 1_000_000,
    logLevel: 'silent',
    ...opts.options,
  });
  if (opts.config !== null && (opts.config !== undefined || !fs.existsSync(options.configPath)))
    writeConfiguration(options.configPath, opts.config);
  const hub = await startHub(options, createLogger(options.logLevel));
  // Once: a second release of its data directory's lock would take the lock of a hub started there since.
  // Stopped, it is not held for the end of the file.
  let stopHub: (() => Promise<void>) | undefined = hub.stop;
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= stopHub!();
    stopHub = undefined;
    return stopped;
  };
  afterFile(stop);
  return Object.assign(hub, { dataDir, options, stop });
}

/** `count` hubs on one PostgreSQL database, started together. */
export const hubsOn = (databaseUrl: string, count: number, options: Partial<HubOptions> = {}) =>
  Promise.all(Array.from({ length: count }, () => startTestHub({ options: { databaseUrl, ...options } })));

export interface Identity {
  SentinelName: string;
  PackageName: string;
  AccessKey: string;
}

export const admin: Identity = { SentinelName: 'Management', PackageName: 'Tests', AccessKey: ADMIN_KEY };
export const consumer = (name = 'App', key = DEV_KEY): Identity => ({
  SentinelName: 'Consumer',
  PackageName: name,
  AccessKey: key,
});
export const pkg = (sentinel: string, name: string, key = DEV_KEY): Identity => ({
  SentinelName: sentinel,
  PackageName: name,
  AccessKey: key,
});

export interface Reply {
  status: number;
  text: string;
  headers: Headers;
  json: <T = unknown>() => T;
}

/** A small HTTP client over fetch: `call(hub, 'GET', 'consumer/GetMessages', identity, {query})`. */
export async function call(
  hub: { url: string },
  method: string,
  action: string,
  identity: Identity | undefined,
  init: {
    query?: Record<string, string | number>;
    body?: unknown;
    contentType?: string;
    signal?: AbortSignal;
    headers?: Record<string, string>;
  } = {},
): Promise<Reply> {
  const url = new URL(`${hub.url}/rest/${action}`);
  for (const [k, v] of Object.entries({ ...(identity ?? {}), ...(init.query ?? {}) }))
    url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['Content-Type'] = init.contentType ?? 'application/json';
  }
  return replyOf(await fetch(url, { method, headers, body, signal: init.signal }));
}

/** A fetch response read whole. */
export async function replyOf(response: Response): Promise<Reply> {
  const text = await response.text();
  return { status: response.status, text, headers: response.headers, json: <T>() => JSON.parse(text) as T };
}

export const get = (
  hub: { url: string },
  action: string,
  identity: Identity | undefined,
  query: Record<string, string | number> = {},
) => call(hub, 'GET', action, identity, { query });

export const post = (
  hub: { url: string },
  action: string,
  identity: Identity | undefined,
  body: unknown,
  contentType?: string,
) => call(hub, 'POST', action, identity, { body, contentType });

/** The subscription id out of a Subscribe* answer (a JSON string). */
export const idOf = (reply: Pick<Reply, 'status' | 'text' | 'json'>) => {
  if (reply.status !== 200) throw new Error(`subscribe failed: ${reply.status} ${reply.text}`);
  return reply.json<string>();
};

export type TestHub = Awaited<ReturnType<typeof startTestHub>>;

/**
 * For a test file: returns a `hub(options)` that starts a test hub and stops it after each test.
 * Call at the top level of the file.
 */
export function hubsStoppedAfterEach(): (options?: TestHubOptions) => Promise<TestHub> {
  const running: TestHub[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((h) => h.stop()));
  });
  return async (options = {}) => {
    const h = await startTestHub(options);
    running.push(h);
    return h;
  };
}
