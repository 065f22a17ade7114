/**
 * Test support: a web page in jsdom, on an origin other than the hub's, running jQuery and npm's
 * ASP.NET SignalR client (2.2.x or 2.4.3) as Constellation's pages do: `$.hubConnection(url,
 * {useDefaultPath: true})` with a server URL ending in `/` (so `//signalr/…`), identity in `qs`, the
 * client methods subscribed before `start`. A clean-room stand-in for Constellation's proxy: its facts
 * (research/signalr.md §3.2), none of its code.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { JSDOM, VirtualConsole } from 'jsdom';

const require = createRequire(import.meta.url);
const source = (module: string) => fs.readFileSync(require.resolve(module), 'utf8');
const JQUERY = source('jquery/dist/jquery.js');
const CLIENTS = {
  '2.2': source('signalr/jquery.signalR.js'),
  '2.4': source('signalr-2.4/jquery.signalR.js'),
} as const;

export type ClientVersion = keyof typeof CLIENTS;
export type Transport = 'longPolling' | 'webSockets' | 'serverSentEvents';

/** What a page's callbacks received, in order. */
export interface Received {
  hub: string;
  method: string;
  args: unknown[];
}

interface Deferred {
  done(f: (...a: unknown[]) => void): Deferred;
  fail(f: (e: unknown) => void): Deferred;
}
interface Proxy {
  on(method: string, f: (...args: unknown[]) => void): void;
  invoke(method: string, ...args: unknown[]): Deferred;
}
interface Connection {
  qs: unknown;
  state: number;
  id: string;
  messageId?: string;
  transport?: { name: string };
  createHubProxy(name: string): Proxy;
  start(options: object): Deferred;
  stop(): void;
  reconnecting(f: () => void): void;
  reconnected(f: () => void): void;
  disconnected(f: () => void): void;
  received(f: (data: unknown) => void): void;
  _?: { negotiateResponse?: unknown };
}

const promised = <T>(deferred: Deferred) =>
  new Promise<T>((resolve, reject) => {
    deferred
      .done((value) => resolve(value as T))
      .fail((error) => reject(error instanceof Error ? error : new Error(String(error))));
  });

export class SignalRPage {
  readonly received: Received[] = [];
  readonly events: string[] = [];
  private readonly dom: JSDOM;
  readonly connection: Connection;
  private readonly proxies = new Map<string, Proxy>();

  /**
   * `hubUrl` is the hub's base URL (with a trailing slash, as pages configure it); `hubs` the hub
   * names the page subscribes callbacks on, each with the callback names it listens for.
   */
  constructor(
    hubUrl: string,
    qs: Record<string, string>,
    hubs: Record<string, string[]>,
    version: ClientVersion = '2.2',
    origin = 'http://page.example',
  ) {
    const virtualConsole = new VirtualConsole();
    this.dom = new JSDOM('<!doctype html><html><head></head><body></body></html>', {
      url: `${origin}/index.html`,
      runScripts: 'outside-only',
      virtualConsole,
    });
    const window = this.dom.window as unknown as {
      eval(code: string): unknown;
      jQuery: { hubConnection(url: string, o: object): Connection };
    };
    window.eval(JQUERY);
    window.eval(CLIENTS[version]);
    this.connection = window.jQuery.hubConnection(hubUrl, { useDefaultPath: true });
    this.connection.qs = qs;
    for (const [hub, methods] of Object.entries(hubs)) {
      const proxy = this.connection.createHubProxy(hub);
      for (const method of methods) proxy.on(method, (...args) => this.received.push({ hub, method, args }));
      this.proxies.set(hub.toLowerCase(), proxy);
    }
    this.connection.reconnecting(() => this.events.push('reconnecting'));
    this.connection.reconnected(() => this.events.push('reconnected'));
    this.connection.disconnected(() => this.events.push('disconnected'));
  }

  start(transport: Transport): Promise<void> {
    return promised(this.connection.start({ transport }));
  }

  invoke<T = unknown>(hub: string, method: string, ...args: unknown[]): Promise<T> {
    const proxy = this.proxies.get(hub.toLowerCase());
    if (!proxy) throw new Error(`no proxy for ${hub}`);
    return promised<T>(proxy.invoke(method, ...args));
  }

  /** What the page received through `method`, its first argument each. */
  of<T = unknown>(method: string): T[] {
    return this.received.filter((r) => r.method.toLowerCase() === method.toLowerCase()).map((r) => r.args[0] as T);
  }

  get transportName(): string | undefined {
    return this.connection.transport?.name;
  }

  close(): void {
    try {
      this.connection.stop();
    } catch {
      // Already stopped.
    }
    this.dom.window.close();
  }
}
