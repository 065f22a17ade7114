/**
 * Who a message reaches, decided from what the log row carries (its scope, args and sender) and what a
 * subscription answers to. Pure: the store filters the log with it, the notifier indexes waiting polls
 * by the same addresses.
 */

/** Numbers on the wire (wire.md). */
export const ScopeNumber = { Group: 1, Package: 2, Sentinel: 3, Others: 4, All: 5 } as const;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isGuid = (text: string) => GUID.test(text);

/** What a message subscription answers to: its caller's names, and its groups with when they were joined. */
export interface MessageAddresses {
  connectionId: string;
  friendlyName: string;
  isPackage: boolean;
  sentinelName: string;
  packageName: string;
  /** Group name → the last message id before the subscription joined it (0 for configured groups). */
  groups: Map<string, number>;
}

export interface LoggedMessage {
  id: number;
  scope: number;
  args: string[];
  senderConnectionId: string;
}

/** How a Package scope argument names its target: `Sentinel/Package`, a ConnectionId, or a package name. */
export function packageArgKind(arg: string): 'friendlyName' | 'connectionId' | 'packageName' {
  if (arg.includes('/')) return 'friendlyName';
  return isGuid(arg) ? 'connectionId' : 'packageName';
}

export function isAddressedTo(message: LoggedMessage, to: MessageAddresses): boolean {
  switch (message.scope) {
    case ScopeNumber.All:
      return true;
    case ScopeNumber.Others:
      return message.senderConnectionId !== to.connectionId;
    case ScopeNumber.Group:
      return message.args.some((group) => {
        const joinedAfter = to.groups.get(group);
        return joinedAfter !== undefined && message.id > joinedAfter;
      });
    case ScopeNumber.Sentinel:
      return message.args.includes(to.sentinelName);
    case ScopeNumber.Package:
      return message.args.some((arg) => {
        const kind = packageArgKind(arg);
        if (kind === 'friendlyName') return arg === to.friendlyName;
        if (kind === 'connectionId') return arg === to.connectionId;
        return to.isPackage && arg === to.packageName;
      });
    default:
      return false;
  }
}
