/**
 * The one family of errors the hub raises on purpose. Each carries the HTTP status and a stable code;
 * the HTTP layer maps them to the wire body `{Message, MessageDetail}` in one place (http/errorMapping.ts).
 */
export class HubError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'HubError';
  }
}

export const badRequest = (code: string, message: string, detail?: string) =>
  new HubError(400, code, message, detail);

export const forbidden = () =>
  new HubError(403, 'AccessDenied', 'Authorization has been denied for this request.');

export const notFound = (message: string, detail?: string) =>
  new HubError(404, 'NotFound', message, detail);

export const conflict = (code: string, message: string) => new HubError(409, code, message);

/** Firmware treats exactly 500 as "subscription lost" and re-subscribes (wire.md). */
export const subscriptionLost = (id: string) =>
  new HubError(
    500,
    'SubscriptionNotFound',
    `The subscription '${id}' does not exist or has expired.`,
    'Subscribe again to receive updates.',
  );

export const tooManyRequests = (message: string) => new HubError(429, 'TooManyRequests', message);

/** Another process (a sqlite3 shell, a backup) held the write lock for longer than the hub waits. */
export const databaseBusy = () =>
  new HubError(
    503,
    'DatabaseBusy',
    'The database is locked by another process.',
    'Try again shortly; a sqlite3 shell may be holding a write transaction open.',
  );

/** Thrown inside a poll's transaction when its client has gone: the transaction rolls back, nothing is consumed. */
export class ClientGone extends Error {
  constructor() {
    super('the client went away');
  }
}

/** SQLite could not get a lock another connection holds (SQLITE_BUSY and its extended codes). */
export function isDatabaseBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
