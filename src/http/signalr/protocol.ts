/**
 * ASP.NET SignalR 2's wire, server side (research/signalr.md §1): the negotiated protocol version, the
 * timings ASP.NET defaults to, and the frames: persistent responses `{C, M, S?, T?}`, client invocations
 * `{H, M, A}`, hub results `{I, R?, E?}` and the hub invocations clients send `{H, M, A, I}`.
 */

/** The transports the hub serves (foreverFrame is refused: clients fall back). */
export type TransportName = 'webSockets' | 'serverSentEvents' | 'longPolling';

/** The hubs a connection may carry, by the name the server writes in `H`. */
export type HubName = 'ConsumerHub' | 'ConstellationHub' | 'ControlHub';

/** ASP.NET's ProtocolResolver: the client's version clamped to 1.2–1.5, 1.2 when it sends none. */
export function protocolVersion(clientProtocol: string | undefined): string {
  const asked = Number(clientProtocol);
  if (!clientProtocol || !Number.isFinite(asked)) return '1.2';
  return String(Math.min(1.5, Math.max(1.2, asked)));
}

/** ASP.NET's defaults (DefaultConfigurationManager), in seconds; the hub's settings may shorten them. */
export interface SignalRTimings {
  /** Longest a long-poll is held before an empty answer. */
  connectionTimeoutS: number;
  /** How long a connection's state outlives its client. */
  disconnectTimeoutS: number;
  /** Keep-alive frames every this often (DisconnectTimeout / 3). */
  keepAliveS: number;
}

export const DEFAULT_TIMINGS: SignalRTimings = { connectionTimeoutS: 110, disconnectTimeoutS: 30, keepAliveS: 10 };

/** The negotiate answer (PersistentConnection.ProcessNegotiationRequest). */
export function negotiation(
  url: string,
  connectionToken: string,
  connectionId: string,
  version: string,
  timings: SignalRTimings,
): Record<string, unknown> {
  return {
    Url: url,
    ConnectionToken: connectionToken,
    ConnectionId: connectionId,
    KeepAliveTimeout: timings.keepAliveS * 2,
    DisconnectTimeout: timings.disconnectTimeoutS,
    ConnectionTimeout: timings.connectionTimeoutS,
    TryWebSockets: true,
    ProtocolVersion: version,
    TransportConnectTimeout: 5,
    LongPollDelay: 0,
  };
}

/** A client invocation the server sends: `UpdateStateObject(so)` on `ConsumerHub`. */
export interface ClientInvocation {
  H: string;
  M: string;
  A: unknown[];
}

/** A hub result: `R` the value, or `E` the error's text. */
export interface HubResult {
  I: string;
  R?: unknown;
  E?: string;
}

export type Frame = ClientInvocation | HubResult;

/** A persistent response: the cursor and what came after it (`S` on the init message only). */
export const persistentResponse = (cursor: string, messages: readonly Frame[], init = false) =>
  init ? { C: cursor, S: 1, M: messages } : { C: cursor, M: messages };

/** A hub method call as a client sends it (`I` a number from JS clients, a string from .NET ones). */
export interface HubInvocation {
  hub: string;
  method: string;
  args: unknown[];
  id: string;
}

/** Incoming frames larger than this are refused (ASP.NET's MaxIncomingWebSocketMessageSize). */
export const MAX_INCOMING_BYTES = 64 * 1024;

/**
 * The invocation in a `send`'s data, or the error text its result carries: JSON of the shape
 * `{H, M, A?, I}`. `id` is what the answer echoes (empty when even that was unreadable).
 */
export function parseInvocation(data: string): HubInvocation | { id: string; error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { id: '', error: 'The data is not valid JSON.' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { id: '', error: 'The data is not a hub invocation.' };
  const { H, M, A, I } = parsed as Record<string, unknown>;
  const id = typeof I === 'string' || typeof I === 'number' ? String(I) : '';
  if (typeof H !== 'string' || typeof M !== 'string' || id === '')
    return { id, error: "A hub invocation needs 'H' (hub), 'M' (method) and 'I' (id)." };
  if (A !== undefined && !Array.isArray(A)) return { id, error: "'A' must be an array of arguments." };
  return { hub: H, method: M, args: (A as unknown[] | undefined) ?? [], id };
}
