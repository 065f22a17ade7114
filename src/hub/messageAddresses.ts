/**
 * Whom a message reaches: the one decision over scopes (`visitTargets`), made from what the log keeps of
 * a message (scope, args, sender) and used both by the store, which tests each logged message against a
 * subscription (`isAddressedTo`), and by the notifier, which looks each target up in its index of
 * waiting polls.
 */
import { ScopeType } from './scope.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The one GUID check (ConnectionIds, subscription ids). */
export const isGuid = (text: string) => GUID.test(text);

/** A message as addressing sees it: its log id, its scope's number (ScopeType), its scope's args and its sender. */
export interface SentMessage {
  id: number;
  scope: number;
  args: string[];
  senderConnectionId: string;
}

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

/**
 * One method per kind of target a scope names; `context` is passed through (so a visitor needs no
 * closure per message). A method that returns true ends the visit.
 */
export interface MessageTargets<C> {
  /** All: every message subscription, the sender's included. */
  all(context: C): boolean;
  /** Others: every message subscription but the sender's. */
  others(sender: string, context: C): boolean;
  /** Group: its members that joined before message `messageId`. */
  group(name: string, messageId: number, context: C): boolean;
  sentinel(name: string, context: C): boolean;
  /** Package scope arguments: `Sentinel/Package`, a ConnectionId, or a package name (package callers of that name). */
  friendlyName(name: string, context: C): boolean;
  connectionId(id: string, context: C): boolean;
  packageName(name: string, context: C): boolean;
}

/** Visits the targets of the message's scope until a method returns true; returns whether one did. */
export function visitTargets<C>(message: SentMessage, targets: MessageTargets<C>, context: C): boolean {
  switch (message.scope) {
    case ScopeType.All:
      return targets.all(context);
    case ScopeType.Others:
      return targets.others(message.senderConnectionId, context);
    case ScopeType.Group:
      for (const group of message.args) if (targets.group(group, message.id, context)) return true;
      return false;
    case ScopeType.Sentinel:
      for (const sentinel of message.args) if (targets.sentinel(sentinel, context)) return true;
      return false;
    case ScopeType.Package:
      for (const arg of message.args) {
        const reached = arg.includes('/')
          ? targets.friendlyName(arg, context)
          : isGuid(arg)
            ? targets.connectionId(arg, context)
            : targets.packageName(arg, context);
        if (reached) return true;
      }
      return false;
    default:
      return false;
  }
}

/** Is `to` one of the message's targets? */
const subscriptionTargets: MessageTargets<MessageAddresses> = {
  all: () => true,
  others: (sender, to) => sender !== to.connectionId,
  group: (name, messageId, to) => {
    const joinedAfter = to.groups.get(name);
    return joinedAfter !== undefined && messageId > joinedAfter;
  },
  sentinel: (name, to) => name === to.sentinelName,
  friendlyName: (name, to) => name === to.friendlyName,
  connectionId: (id, to) => id === to.connectionId,
  packageName: (name, to) => to.isPackage && name === to.packageName,
};

export const isAddressedTo = (message: SentMessage, to: MessageAddresses): boolean =>
  visitTargets(message, subscriptionTargets, to);
