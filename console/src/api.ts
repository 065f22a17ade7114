/**
 * The console's HTTP client. Every call goes through the hub's documented interfaces, authenticated by
 * headers (the access key never appears in an address). Failures surface as the hub's own
 * Message/MessageDetail, told apart by its Code (src/errors.ts); a hub that cannot be reached marks
 * the connection as reconnecting.
 */
import { Store } from './store';

const KEY_STORAGE = 'hub.console.accessKey';
/** The name the console's calls carry: its messages come from Consumer/Console, its saga replies go there. */
export const CONSOLE_NAME = 'Console';

export class HubFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly detail?: string,
    /** The hub's error code (`Code`), absent when the answer was not the hub's error body. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The hub did not answer (stopped, restarting, network down). */
export class Unreachable extends Error {}

export const accessKey = new Store<string | null>(sessionStorage.getItem(KEY_STORAGE));

export function signIn(key: string): void {
  sessionStorage.setItem(KEY_STORAGE, key);
  accessKey.set(key);
}

export function signOut(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  accessKey.set(null);
}

/**
 * Set when the hub refuses the key (deleted, disabled, rotated, right withdrawn): the page signs out
 * instead of retrying, since every refused attempt also slows the hub's answers to this address.
 */
export const keyRefused = new Store<HubFailure | undefined>(undefined);

/** 'online' after any answer from the hub; 'reconnecting' while calls fail to reach it. */
export const connection = new Store<'online' | 'reconnecting'>('online');
/** Grows each time the hub is reached again after being unreachable: pages reload their data on it. */
export const reconnections = new Store(0);

function reached(): void {
  if (connection.value !== 'online') {
    connection.set('online');
    reconnections.set(reconnections.value + 1);
  }
}

let probing = false;

/**
 * While the hub is unreachable, one prober asks `/ready` (no key, no waiting) with back-off capped at
 * 5 s; long-polls sent meanwhile could not tell the hub is back until their own timeout.
 */
function unreachable(): void {
  connection.set('reconnecting');
  if (probing) return;
  probing = true;
  void (async () => {
    const never = new AbortController().signal;
    for (let attempt = 0; connection.value === 'reconnecting'; attempt++) {
      await backoff(attempt, never);
      try {
        const response = await fetch(hubUrl('ready'), { cache: 'no-store' });
        if (response.ok) reached();
      } catch {
        // Still down: try again after the next back-off step.
      }
    }
    probing = false;
  })();
}

/** Resolves once the hub answers again (at once when it does already). */
export function whenOnline(signal: AbortSignal): Promise<void> {
  if (connection.value === 'online') return Promise.resolve();
  return new Promise((resolve) => {
    const stop = connection.subscribe(() => {
      if (connection.value !== 'online') return;
      stop();
      resolve();
    });
    signal.addEventListener(
      'abort',
      () => {
        stop();
        resolve();
      },
      { once: true },
    );
  });
}

export type Interface = 'management' | 'consumer';

export interface CallOptions {
  method?: 'GET' | 'POST' | 'DELETE';
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Sent as is (text or FormData) instead of JSON. */
  rawBody?: BodyInit;
  contentType?: string;
  signal?: AbortSignal;
}

/**
 * Where the hub's interfaces are, as the page sees them: the directory above the page's own `console/`.
 * A hub served under a path prefix (listen URI `http://+:8088/constellation/`) serves the page at
 * `/constellation/console/` and the interfaces at `/constellation/rest/…`; at no prefix this is `/`.
 */
export const HUB_BASE = new URL('../', location.href);

/** A path of the hub's (`ready`, `openapi.json`, `rest/…`), under the prefix the page was loaded from. */
export function hubUrl(path: string): string {
  const url = new URL(path, HUB_BASE);
  return url.pathname + url.search;
}

export function urlOf(iface: Interface, action: string, query: CallOptions['query'] = {}): string {
  const url = new URL(`rest/${iface}/${action}`, HUB_BASE);
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
  return url.pathname + url.search;
}

export function authenticationHeaders(iface: Interface): Record<string, string> {
  return {
    SentinelName: iface === 'management' ? 'Management' : 'Consumer',
    PackageName: CONSOLE_NAME,
    AccessKey: accessKey.value ?? '',
  };
}

async function failureOf(response: Response): Promise<HubFailure> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { Message?: string; MessageDetail?: string; Code?: string };
    if (body && typeof body.Message === 'string')
      return new HubFailure(response.status, body.Message, body.MessageDetail, body.Code);
  } catch {
    // Not the hub's JSON error body (a proxy's page, say): show the status line instead.
  }
  return new HubFailure(
    response.status,
    `The hub answered ${response.status} ${response.statusText}.`,
    text.slice(0, 200) || undefined,
  );
}

/** Calls an action; answers the parsed JSON body (or the text when it is not JSON, undefined on 204). */
export async function call<T = unknown>(iface: Interface, action: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = authenticationHeaders(iface);
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
  }
  if (options.contentType) headers['Content-Type'] = options.contentType;
  let response: Response;
  try {
    response = await fetch(urlOf(iface, action, options.query), {
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    unreachable();
    throw new Unreachable('The hub cannot be reached.');
  }
  // A hub that is starting or stopping answers 503 from its readiness gate; a proxy, 502/504.
  if (response.status === 502 || response.status === 504) {
    unreachable();
    throw new Unreachable('The hub cannot be reached.');
  }
  reached();
  if (!response.ok) {
    const failure = await failureOf(response);
    // A wrong key, not a refused message or group join (MessageNotAuthorized, GroupNotAuthorized).
    if (failure.code === 'AccessDenied') keyRefused.set(failure);
    throw failure;
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  if ((response.headers.get('Content-Type') ?? '').includes('json'))
    return (text === '' ? undefined : JSON.parse(text)) as T;
  return text as T;
}

export const management = <T = unknown>(action: string, options?: CallOptions) =>
  call<T>('management', action, options);
export const consumer = <T = unknown>(action: string, options?: CallOptions) => call<T>('consumer', action, options);

/** Waits, for back-off between retries: 250 ms doubling up to 5 s. */
export function backoff(attempt: number, signal: AbortSignal): Promise<void> {
  const ms = Math.min(5000, 250 * 2 ** attempt);
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Upload with progress (fetch has no upload progress): XMLHttpRequest, same headers and errors. */
export function upload<T>(action: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', urlOf('management', action));
    for (const [name, value] of Object.entries(authenticationHeaders('management')))
      request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onerror = () => {
      unreachable();
      reject(new Unreachable('The hub cannot be reached.'));
    };
    request.onload = () => {
      reached();
      const text = request.responseText;
      if (request.status >= 200 && request.status < 300) {
        onProgress(1);
        resolve((text ? JSON.parse(text) : undefined) as T);
        return;
      }
      try {
        const body = JSON.parse(text) as { Message: string; MessageDetail?: string; Code?: string };
        reject(new HubFailure(request.status, body.Message, body.MessageDetail, body.Code));
      } catch {
        reject(new HubFailure(request.status, `The hub answered ${request.status}.`));
      }
    };
    request.send(form);
  });
}
