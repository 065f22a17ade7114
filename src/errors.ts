/**
 * The one catalogue of errors the hub raises on purpose: every code with its HTTP status and default
 * message, typed as a union so that a code not listed here does not compile. A HubError carries a code
 * from it (a call site may give a more precise message and a detail); the HTTP layer maps it to the wire
 * body `{Message, MessageDetail}` in one place (http/errorMapping.ts). The store translates the
 * database's lock errors (SQLITE_BUSY) to `DatabaseBusy`, so the HTTP layer never imports the database.
 */
export const ERRORS = {
  // 400: the request is not valid
  InvalidParameter: { status: 400, message: 'A parameter is not valid.' },
  MissingParameter: { status: 400, message: 'A required parameter is missing.' },
  MissingBody: { status: 400, message: 'The request needs a body.' },
  MalformedJson: { status: 400, message: 'The body is not valid JSON.' },
  InvalidBody: { status: 400, message: 'The body is not valid.' },
  UnsupportedContentType: { status: 400, message: 'The Content-Type is not supported.' },
  MalformedRequest: { status: 400, message: 'The request is not valid HTTP.' },
  InvalidName: { status: 400, message: 'A name is not valid.' },
  InvalidScope: { status: 400, message: 'The scope is not valid.' },
  MissingScopeArgs: { status: 400, message: 'The scope needs at least one argument.' },
  InvalidSubscriptionId: { status: 400, message: 'The subscription id is not a GUID.' },
  InvalidUrl: { status: 400, message: 'The address is not valid.' },
  InvalidPackage: { status: 400, message: 'The package archive is not valid.' },
  DownloadFailed: { status: 400, message: 'The package could not be downloaded.' },
  // 403: authenticated or not, this is not allowed
  AccessDenied: { status: 403, message: 'Authorization has been denied for this request.' },
  MessageNotAuthorized: { status: 403, message: 'This message is not authorized.' },
  GroupNotAuthorized: { status: 403, message: 'Joining this group is not authorized.' },
  // 404, 405
  NotFound: { status: 404, message: 'Not found.' },
  MethodNotAllowed: { status: 405, message: 'This method is not allowed here.' },
  // 408, 409
  BodyTimeout: { status: 408, message: 'The request body was not received in time.' },
  HeadersTimeout: { status: 408, message: 'The request line and headers were not received in time.' },
  NameTaken: { status: 409, message: 'The name is taken.' },
  LicenseLimit: { status: 409, message: 'The license does not allow this.' },
  LastManagementCredential: { status: 409, message: 'The last management credential cannot be removed.' },
  CredentialInUse: { status: 409, message: 'The credential is in use.' },
  ConfigurationFilePending: { status: 409, message: 'The configuration file has changes that are not applied.' },
  // 413–415, 431: too large, wrong encoding
  PackageTooLarge: { status: 413, message: 'The package is too large.' },
  ValueTooLarge: { status: 414, message: 'The request address is too long.' },
  UnsupportedContentEncoding: { status: 415, message: 'The Content-Encoding is not supported.' },
  HeadersTooLarge: { status: 431, message: 'The request address or headers are too large.' },
  // 429: limits per credential or address
  TooManyRequests: { status: 429, message: 'Too many requests.' },
  TooManySubscriptions: { status: 429, message: 'The credential has the most subscriptions allowed.' },
  // 500: firmware treats exactly 500 on a poll as "subscription lost" and re-subscribes (wire.md)
  SubscriptionNotFound: { status: 500, message: 'The subscription does not exist or has expired.' },
  // 503: try again later
  DatabaseBusy: { status: 503, message: 'The database is locked by another process.' },
  ConsoleNotBuilt: { status: 503, message: 'The console has not been built.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;
type CodeWithStatus<S extends number> = { [C in ErrorCode]: (typeof ERRORS)[C]['status'] extends S ? C : never }[ErrorCode];

export class HubError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string = ERRORS[code].message,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'HubError';
  }
}

/** The error of `code` with the catalogue's status (and its message unless a more precise one is given). */
export const hubError = (code: ErrorCode, message?: string, detail?: string) =>
  new HubError(ERRORS[code].status, code, message ?? ERRORS[code].message, detail);

export const badRequest = (code: CodeWithStatus<400>, message: string, detail?: string) =>
  new HubError(400, code, message, detail);

export const forbidden = () =>
  new HubError(403, 'AccessDenied', 'Authorization has been denied for this request.');

export const notFound = (message: string, detail?: string) =>
  new HubError(404, 'NotFound', message, detail);

export const conflict = (code: CodeWithStatus<409>, message: string) => new HubError(409, code, message);

/** Firmware treats exactly 500 as "subscription lost" and re-subscribes (wire.md). */
export const subscriptionLost = (id: string) =>
  new HubError(
    500,
    'SubscriptionNotFound',
    `The subscription '${id}' does not exist or has expired.`,
    'Subscribe again to receive updates.',
  );

export const tooManyRequests = (message: string) => new HubError(429, 'TooManyRequests', message);

/** The database lock error as the catalogue's 503, anything else as it is: for code that talks to SQLite. */
export const translateStoreError = (error: unknown): unknown => (isDatabaseBusy(error) ? databaseBusy() : error);

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

/** SQLite could not get a lock another connection holds (SQLITE_BUSY and its extended codes, or the catalogue's DatabaseBusy). */
export function isDatabaseBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code === 'DatabaseBusy');
}
