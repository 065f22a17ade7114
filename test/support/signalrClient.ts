/**
 * Test support: a clean-room ASP.NET SignalR 2 client on fetch and `ws` that speaks as .NET's does
 * (protocol 1.4, identity in headers, `[{"Name":"ConstellationHub"}]`, string invocation ids), standing
 * in for Constellation's PackageHost; and the raw requests the protocol tests make. It follows the
 * protocol facts of research/signalr.md §1, nothing of Constellation's code.
 */
import WebSocket from 'ws';

export interface Invocation {
  H: string;
  M: string;
  A: unknown[];
}

export interface Result {
  I: string;
  R?: unknown;
  E?: string;
}

export interface Persistent {
  C?: string;
  S?: number;
  M?: (Invocation | Result)[];
}

export class RawSignalRClient {
  readonly received: Invocation[] = [];
  negotiated: Record<string, unknown> = {};
  cursor: string | undefined;
  private socket: WebSocket | undefined;
  private nextId = 0;
  private readonly pending = new Map<string, (r: Result) => void>();
  private polling = false;
  private pollAbort: AbortController | undefined;

  constructor(
    /** The hub's base URL without a trailing slash. */
    public base: string,
    /** Sent as headers on every request (PackageHost's SentinelName/PackageName/AccessKey). */
    private readonly headers: Record<string, string>,
    private readonly hubs: string[],
    private readonly clientProtocol = '1.4',
  ) {}

  get token(): string {
    return this.negotiated.ConnectionToken as string;
  }

  url(action: string, extra: Record<string, string> = {}): string {
    const url = new URL(`${this.base}/signalr/${action}`);
    url.searchParams.set('clientProtocol', this.clientProtocol);
    if (this.negotiated.ConnectionToken) url.searchParams.set('connectionToken', this.token);
    url.searchParams.set('connectionData', JSON.stringify(this.hubs.map((name) => ({ Name: name }))));
    for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
    return url.toString();
  }

  async request(
    action: string,
    extra: Record<string, string> = {},
    form?: Record<string, string>,
    signal?: AbortSignal,
  ) {
    const response = await fetch(this.url(action, extra), {
      method: form ? 'POST' : 'GET',
      headers: { ...this.headers, ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
      signal,
    });
    const text = await response.text();
    return { status: response.status, text, json: <T = unknown>() => JSON.parse(text) as T, headers: response.headers };
  }

  async negotiate(): Promise<Record<string, unknown>> {
    const reply = await this.request('negotiate');
    if (reply.status !== 200) throw new Error(`negotiate: ${reply.status} ${reply.text}`);
    this.negotiated = reply.json<Record<string, unknown>>();
    return this.negotiated;
  }

  private take(response: Persistent | Result): void {
    if ('I' in response) {
      const waiter = this.pending.get(String(response.I));
      this.pending.delete(String(response.I));
      waiter?.(response);
      return;
    }
    if (response.C !== undefined) this.cursor = response.C;
    for (const frame of response.M ?? []) if ('H' in frame) this.received.push(frame as Invocation);
  }

  /** Opens the WebSocket (connect, or reconnect after `cursor`) and waits for its first frame. */
  openSocket(action: 'connect' | 'reconnect' = 'connect'): Promise<void> {
    const extra: Record<string, string> = { transport: 'webSockets' };
    if (action === 'reconnect' && this.cursor !== undefined) extra.messageId = this.cursor;
    const socket = new WebSocket(this.url(action, extra).replace(/^http/, 'ws'), { headers: this.headers });
    this.socket = socket;
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      socket.on('message', (data) => {
        this.take(JSON.parse(String(data)) as Persistent | Result);
        resolve();
      });
      if (action === 'reconnect') socket.once('open', () => resolve());
    });
  }

  get socketState(): number | undefined {
    return this.socket?.readyState;
  }

  /** Long polling: connect (the init message), then poll in a loop until stopped. */
  async connectLongPolling(): Promise<void> {
    const reply = await this.request('connect', { transport: 'longPolling' });
    if (reply.status !== 200) throw new Error(`connect: ${reply.status} ${reply.text}`);
    this.take(reply.json<Persistent>());
  }

  /** One poll after the current cursor (or `messageId`): what it answered. */
  async poll(messageId = this.cursor, signal?: AbortSignal): Promise<Persistent> {
    const reply = await this.request('poll', { transport: 'longPolling' }, { messageId: messageId ?? '' }, signal);
    if (reply.status !== 200) throw new Error(`poll: ${reply.status} ${reply.text}`);
    const answer = reply.json<Persistent>();
    this.take(answer);
    return answer;
  }

  startPolling(): void {
    this.polling = true;
    void (async () => {
      while (this.polling) {
        this.pollAbort = new AbortController();
        try {
          await this.poll(this.cursor, this.pollAbort.signal);
        } catch {
          if (this.polling) await new Promise((r) => setTimeout(r, 50));
        }
      }
    })();
  }

  async start(transport: string): Promise<unknown> {
    const reply = await this.request('start', { transport });
    return reply.json();
  }

  /** Invokes a hub method: over the socket when open, else with /send. */
  async invoke(hub: string, method: string, ...args: unknown[]): Promise<Result> {
    const id = String(this.nextId++);
    const frame = JSON.stringify({ H: hub, M: method, A: args, I: id });
    if (this.socket?.readyState === WebSocket.OPEN) {
      const answered = new Promise<Result>((resolve) => this.pending.set(id, resolve));
      this.socket.send(frame);
      return answered;
    }
    const reply = await this.request('send', { transport: 'longPolling' }, { data: frame });
    return reply.json<Result>();
  }

  sendRaw(text: string | Buffer): void {
    this.socket?.send(text);
  }

  of(method: string): unknown[][] {
    return this.received.filter((r) => r.M.toLowerCase() === method.toLowerCase()).map((r) => r.A);
  }

  close(): void {
    this.polling = false;
    this.pollAbort?.abort();
    this.socket?.terminate();
  }
}
