/** What the SignalR endpoints read of a request, and what a pushed transport writes to. */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { ClientSignal } from '../../hub/polls/clientSignal.js';
import type { Lookup } from './identity.js';
import { MAX_INCOMING_BYTES } from './protocol.js';

/** `/signalr/<action>` (a trailing slash allowed). */
export const SIGNALR_PATH = /^\/signalr\/([a-z]+)\/?$/i;

/** The query string's and the headers' values, names compared case-insensitively. */
export function lookupOf(query: URLSearchParams, headers: IncomingMessage['headers']): Lookup {
  const lowered = new Map<string, string>();
  for (const [name, value] of query) if (!lowered.has(name.toLowerCase())) lowered.set(name.toLowerCase(), value);
  return (name) => {
    const lower = name.toLowerCase();
    const header = headers[lower];
    return lowered.get(lower) ?? (Array.isArray(header) ? header[0] : header);
  };
}

/** A signal fired when a pushed transport closes. */
export class Closed implements ClientSignal {
  aborted = false;
  private listeners: EventListenerObject[] = [];
  addEventListener(_type: 'abort', listener: EventListenerObject): void {
    if (!this.aborted) this.listeners.push(listener);
  }
  removeEventListener(_type: 'abort', listener: EventListenerObject): void {
    this.listeners = this.listeners.filter((l) => l !== listener);
  }
  fire(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const listener of this.listeners.splice(0)) listener.handleEvent(new Event('abort'));
  }
}

/** Where a pushed transport writes (a WebSocket, an SSE stream). */
export interface Sink {
  /** Hands `text` to the socket: false when it is closed. */
  send(text: string): boolean;
  buffered(): number;
  close(): void;
}

/**
 * A POST's form body (`data`, `messageId`), refused past 64 KB with raw-body's 413 (errorMapping.ts).
 * raw-body stops reading without destroying the request, so the refusal's lingering close can read the
 * rest (lingeringClose.ts); a loop that broke out of the request's iterator destroyed it, and Koa
 * answered the destroyed request with a plain 500.
 */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (ctx.method !== 'POST') return new URLSearchParams();
  return new URLSearchParams(await getRawBody(ctx.req, { limit: MAX_INCOMING_BYTES, encoding: 'utf8' }));
}
