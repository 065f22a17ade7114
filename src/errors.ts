/**
 * The one catalogue of the errors the hub raises on purpose. A call site names a code and gives the
 * facts its message needs (`hubError('PackageNotFound', { name })`), plus a detail when it knows more;
 * the wording is the catalogue's. Only this file constructs a HubError.
 *
 * Statuses are not here: they are the wire's business, and the store and the domain raise these errors
 * too, so the code → status table lives in the HTTP layer (http/errorMapping.ts, typed to cover every
 * code), which alone turns an error into `{Message, MessageDetail, Code}`. Codes are stable: clients
 * (the console) tell errors apart by `Code`, never by message text. Messages marked (Constellation)
 * are what Constellation's clients and tests expect byte for byte.
 */

/** A text, or a text built from the facts a call site gives. */
type Text = string | ((facts: never) => string);

/** `message` is the Message; `detail` is the default MessageDetail. */
interface Wording {
  readonly message: Text;
  readonly detail?: Text;
}

/** The engine whose wait ran out (DatabaseBusy): each one's words name what can hold it up. */
export type DatabaseEngine = 'SQLite' | 'PostgreSQL';

export const ERRORS = {
  // The request is not valid
  MissingParameter: { message: (f: { parameter: string }) => `The parameter '${f.parameter}' is required.` },
  InvalidParameter: {
    message: (f: { parameter: string; expected: string; got: string }) =>
      `The parameter '${f.parameter}' must be ${f.expected}, got '${f.got}'.`,
  },
  ValueTooLarge: {
    message: (f: { max: number }) => `The value is longer than ${f.max} characters.`,
    detail: 'Send large values with POST PushStateObject and a JSON body.',
  },
  InvalidName: { message: (f: { what: string; problem: string }) => `The ${f.what} ${f.problem}.` },
  InvalidSubscriptionId: { message: (f: { id: string }) => `subscriptionId '${f.id}' is not a GUID.` },
  MissingScope: { message: 'The scope is required (All, Others, Group, Sentinel or Package).' },
  InvalidScope: {
    message: (f: { scope: string }) =>
      `Unknown scope '${f.scope}': use All, Others, Group, Sentinel or Package (or 5, 4, 1, 3, 2).`,
  },
  MissingScopeArgs: { message: (f: { scope: string }) => `The scope '${f.scope}' needs at least one argument (args).` },
  MissingMessageKey: { message: "The message key ('key' or 'Key') is required." },
  MissingBody: { message: 'The request body is empty: a JSON body is required.' },
  UnsupportedContentType: { message: (f: { expected: string }) => `The body must be ${f.expected}.` },
  MalformedJson: { message: 'The request body is not valid JSON.' },
  InvalidBody: {
    message: (f: { field: string; problem: string }) => `The body is not valid: ${f.field} ${f.problem}.`,
  },
  UnreadableBody: { message: 'The request body could not be read.' },
  BodyTooLarge: { message: 'The request body is too large.' },
  BodyTimeout: {
    message: (f: { seconds: number }) => `The request body did not arrive within ${f.seconds} s.`,
    detail: 'Send the whole body at once.',
  },
  UnsupportedContentEncoding: {
    message: (f: { encoding: string }) =>
      `The Content-Encoding '${f.encoding}' is not supported: send the body uncompressed.`,
    detail: 'Only identity is accepted.',
  },
  MalformedRequest: { message: 'The request is not valid HTTP.' },
  HeadersTimeout: {
    message: (f: { seconds: number }) => `The request did not arrive within ${f.seconds} s.`,
    detail: 'Send the request line and headers at once.',
  },
  HeadersTooLarge: {
    message: 'The request address or headers are too large.',
    detail: 'Send large values in the body of a POST request.',
  },
  MethodNotAllowed: { message: 'The requested resource does not support this HTTP method.' }, // (Constellation)

  // Authentication and authorizations
  AccessDenied: { message: 'Authorization has been denied for this request.' }, // (Constellation)
  MessageNotAuthorized: { message: 'This message is not authorized.' },
  GroupNotAuthorized: { message: 'Joining this group is not authorized.' },

  // What the request names does not exist
  NotFound: {
    message: (f: { path: string }) => `No HTTP resource was found that matches the request URI '${f.path}'.`,
  }, // (Constellation)
  NoInterface: { message: 'No interface is served at this address.' },
  SubscriptionNotFound: {
    message: (f: { id: string }) => `The subscription '${f.id}' does not exist or has expired.`,
    detail: 'Subscribe again to receive updates.',
  },
  SentinelNotFound: { message: (f: { sentinel: string }) => `The sentinel '${f.sentinel}' does not exist.` },
  PackageInstanceNotFound: {
    message: (f: { sentinel: string; instance: string }) =>
      `The package instance '${f.instance}' does not exist on sentinel '${f.sentinel}'.`,
  },
  CredentialNotFound: { message: (f: { credential: string }) => `The credential '${f.credential}' does not exist.` },
  DescriptorNotFound: {
    message: (f: { sentinel: string; instance: string }) =>
      `The package instance '${f.sentinel}/${f.instance}' has not declared a descriptor.`,
  },
  ConfigurationFileNotFound: { message: 'The configuration file does not exist.' },
  PackageNotFound: { message: (f: { name: string }) => `The package '${f.name}' is not in the repository.` },
  IconNotFound: { message: (f: { name: string }) => `The package '${f.name}' has no icon.` },
  XsdNotFound: {
    message: (f: { name: string; setting: string }) => `The setting '${f.setting}' of package '${f.name}' has no XSD.`,
  },

  // Management: configuration, credentials, license
  InvalidConfiguration: { message: 'The configuration is not valid.' },
  MissingConfiguration: { message: 'The body must be the XML configuration file (Content-Type: application/xml).' },
  ConfigurationFilePending: {
    message:
      'The configuration file has changes that are not applied: it was edited by hand or sent with POST configuration and not reloaded since.',
    detail:
      'Apply them first (GET configuration/reload), or post the applied configuration back (its text is the newest applied version in the configuration_versions table), then repeat this change.',
  },
  ConfigurationPending: {
    message:
      'The configuration has changes that are not applied: a configuration was sent with POST configuration and not reloaded since.',
    detail:
      'Apply it first (GET configuration/reload), or post the applied configuration back (`hub config export` prints it), then repeat this change.',
  },
  CredentialInUse: {
    message: (f: { credential: string; users: string }) => `The credential '${f.credential}' is used by ${f.users}.`,
  },
  LastManagementCredential: { message: 'This change would leave no enabled credential with the management right.' },
  LicenseLimit: {
    message: (f: { max: number; what: string; setting: string }) =>
      `The license allows at most ${f.max} ${f.what} (${f.setting}).`,
  },

  // The package repository
  MissingPackageFile: { message: 'The form has no file: attach one or more package archives.' },
  InvalidPackage: { message: (f: { reason: string }) => `The file is not a valid package: ${f.reason}.` },
  DuplicatePackage: { message: (f: { name: string }) => `Two of the uploaded files are the package '${f.name}'.` },
  PackageTooLarge: {
    message: (f: { max: number; file?: string }) =>
      `The package${f.file === undefined ? '' : ` '${f.file}'`} is larger than ${f.max} bytes.`,
  },
  PackageNameTaken: { message: (f: { name: string }) => `The repository already has a package named '${f.name}'.` },
  InvalidUrl: { message: (f: { url: string }) => `'${f.url}' is not a URL.` },
  UnsupportedUrlScheme: {
    message: (f: { scheme: string }) => `Only http and https URLs can be downloaded, not '${f.scheme}'.`,
  },
  DownloadFailed: {
    message: (f: { url: string; reason: string }) =>
      `The package could not be downloaded from '${f.url}': ${f.reason}.`,
  },
  TooManyRedirects: { message: (f: { max: number; url: string }) => `More than ${f.max} redirects from '${f.url}'.` },
  DownloadInterrupted: { message: (f: { reason: string }) => `The download was interrupted: ${f.reason}.` },

  // Limits per credential or address
  TooManySubscriptions: {
    message: (f: { credential: string; count: number }) =>
      `The credential '${f.credential}' has ${f.count} subscriptions (the most allowed).`,
    detail: 'Reuse a subscription (pass its subscriptionId), or let unused ones expire.',
  },
  TooManyPolls: {
    message: (f: { credential: string; count: number }) =>
      `The credential '${f.credential}' already has ${f.count} long-polls waiting (the most allowed).`,
  },
  TooManyAuthFailures: {
    message: (f: { seconds: number }) =>
      `Too many failed authentications from this address: try again in ${f.seconds} s.`,
  },

  // The hub cannot answer now
  DatabaseBusy: {
    message: (f: { engine: DatabaseEngine }) =>
      f.engine === 'PostgreSQL' ? 'PostgreSQL is busy or unreachable.' : 'The database is locked by another process.',
    detail: (f: { engine: DatabaseEngine }) =>
      f.engine === 'PostgreSQL'
        ? 'Try again shortly; no pooled connection came free, a lock stayed held past HUB_LOCK_WAIT_MS, or the connection to PostgreSQL was lost.'
        : 'Try again shortly; a sqlite3 shell may be holding a write transaction open.',
  },
  ConsoleNotBuilt: {
    message: 'The console is not built.',
    detail: "Run 'npm run build' (npm ci does it once) and reload the page.",
  },
  InternalError: { message: 'An error has occurred.' },

  // SignalR (http/signalr): what a connection request names is not served
  SignalRUnknownHub: { message: (f: { hub: string }) => `'${f.hub}' Hub could not be resolved.` },
  SignalRHubNotAllowed: {
    message: (f: { hub: string; reason: string }) => `This identity cannot connect to '${f.hub}': ${f.reason}.`,
  },
  SignalRBadRequest: { message: (f: { problem: string }) => `Not a SignalR request: ${f.problem}.` },
  SignalRUnknownConnection: {
    message: 'The connection token names no connection of this identity, or one that has ended.',
    detail: 'Negotiate a new connection.',
  },
  SignalRTooManyConnections: {
    message: (f: { credential: string; count: number }) =>
      `The credential '${f.credential}' already has ${f.count} SignalR connections (the most allowed, HUB_SIGNALR_MAX_CONNECTIONS_PER_CREDENTIAL).`,
  },
} as const satisfies Record<string, Wording>;

export type ErrorCode = keyof typeof ERRORS;

type MessageOf<C extends ErrorCode> = (typeof ERRORS)[C]['message'];
/** What `hubError` takes after the code: the facts its message needs (if any), then a detail. */
export type ErrorArgs<C extends ErrorCode> =
  MessageOf<C> extends (facts: infer F) => string ? [facts: F, detail?: string] : [detail?: string];

export class HubError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'HubError';
  }
}

/** The error `code` with the catalogue's wording; a detail given here replaces the catalogue's. */
export function hubError<C extends ErrorCode>(code: C, ...args: ErrorArgs<C>): HubError {
  const wording: Wording = ERRORS[code];
  const [facts, detail] = typeof wording.message === 'function' ? args : [undefined, ...args];
  const text = (t: Text) => (typeof t === 'function' ? (t as (facts: unknown) => string)(facts) : t);
  const defaultDetail = wording.detail === undefined ? undefined : text(wording.detail);
  return new HubError(code, text(wording.message), (detail as string | undefined) ?? defaultDetail);
}

/** Whether `error` is the hub's error `code` (for code that must react to one without knowing statuses). */
export const isHubError = (error: unknown, code: ErrorCode): error is HubError =>
  error instanceof HubError && error.code === code;

/** Thrown inside a poll's transaction when its client has gone: the transaction rolls back, nothing is consumed. */
export class ClientGone extends Error {
  constructor() {
    super('the client went away');
  }
}
