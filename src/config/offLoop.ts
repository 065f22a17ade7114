/**
 * editText and parseConfigurationFile off the event loop: inline for a small file (a few milliseconds),
 * on a worker thread (offLoopWorker.ts) for a large one, so that no long-poll waits on parsing the whole
 * file. One worker serves every hub of the process; it is started on first need, does not keep the
 * process alive, and is started again if it ever dies.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ConfigurationFile, HubConfiguration } from './model.js';
import { editText } from './editText.js';
import type { EditReply, EditRequest } from './offLoopWorker.js';
import { ConfigurationError } from './validate.js';
import { parseConfigurationFile } from './xmlFile.js';

/** Below this size the edit costs less than the round trip to the worker. */
export const WORKER_THRESHOLD_BYTES = 64 * 1024;

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();

/** tsx's ESM loader API, for a worker started from the TypeScript sources (tests, tsx). */
function tsxLoaderUrl(self: string): string {
  const manifest = createRequire(self).resolve('tsx/package.json');
  const { exports } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as {
    exports: Record<string, { import: { default: string } }>;
  };
  return pathToFileURL(path.join(path.dirname(manifest), exports['./esm/api'].import.default)).href;
}

function startWorker(): Worker {
  const self = import.meta.url;
  // The built files run as they are; the TypeScript sources need tsx's loader in the worker too.
  const started = self.endsWith('.ts')
    ? new Worker(
        `import(${JSON.stringify(tsxLoaderUrl(self))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./offLoopWorker.ts', self).href)}); });`,
        { eval: true },
      )
    : new Worker(new URL('./offLoopWorker.js', self));
  started.unref();
  started.on('message', (reply: EditReply) => {
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if ('text' in reply) waiting.resolve(reply.text);
    else waiting.reject(reply.configuration ? new ConfigurationError(reply.error) : new Error(reply.error));
  });
  const fail = (error: Error) => {
    if (worker === started) worker = undefined;
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  started.on('error', fail);
  started.on('exit', (code) => fail(new Error(`the configuration edit worker stopped (exit code ${code})`)));
  return started;
}

/** editText: `text` edited in place so that it reads as `after`. */
export async function editTextOffLoop(text: string, after: HubConfiguration): Promise<string> {
  const afterJson = JSON.stringify(after);
  if (text.length < WORKER_THRESHOLD_BYTES) return editText(text, afterJson);
  return inWorker({ id: nextId++, text, afterJson });
}

/** parseConfigurationFile: `text` read and validated. */
export async function parseConfigurationFileOffLoop(text: string): Promise<ConfigurationFile> {
  if (text.length < WORKER_THRESHOLD_BYTES) return parseConfigurationFile(text);
  return JSON.parse(await inWorker({ id: nextId++, text })) as ConfigurationFile;
}

async function inWorker(request: EditRequest): Promise<string> {
  worker ??= startWorker();
  const { id } = request;
  const result = new Promise<string>((resolve, reject) => pending.set(id, { resolve, reject }));
  // Referenced while a request waits on it, so that a script's last write is not cut short.
  worker.ref();
  worker.postMessage(request);
  try {
    return await result;
  } finally {
    if (pending.size === 0) worker?.unref();
  }
}
