/** Sending messages to scopes, message subscriptions and groups, and long-polling the log. */
import { hubError } from '../errors.js';
import type { ClientSignal } from './polls/clientSignal.js';
import type { MessageStore, TakenMessages } from './ports/messages.js';
import { SAGA_RESPONSE_KEY } from './ports/messages.js';
import type { SubscriptionStore } from './ports/subscriptions.js';

import { groupRefusal, messageRefusal } from './access/authorization.js';
import type { Caller, CallerDirectory } from './access/caller.js';
import { isPackageCaller, SenderType } from './access/caller.js';
import type { MessageRecord } from './records.js';
import { messageRecord } from './records.js';
import { checkScopeArgs, parseScope, ScopeType } from './scope.js';
import type { PollRead, Subscriptions } from './polls/subscriptions.js';
import type { ChangeAnnouncer } from './polls/wakeUps.js';

export interface SendInput {
  scope: unknown;
  args: string[];
  key: string;
  data: unknown;
  sagaId?: string | null;
}

export interface SendOptions {
  authorize: boolean;
  /** Sent over a SignalR hub: Sender.Type says ConsumerHub or ConstellationHub (a saga reply's route). */
  viaHub?: boolean;
}

const senderType = (sender: Caller, viaHub: boolean) =>
  isPackageCaller(sender)
    ? viaHub
      ? SenderType.ConstellationHub
      : SenderType.ConstellationHttp
    : viaHub
      ? SenderType.ConsumerHub
      : SenderType.ConsumerHttp;

export interface MessageCounters {
  /** A subscription fell behind the log's retention and missed this many log entries. */
  missed(subscriptionId: string, caller: Caller, count: number): void;
}

export class Messages {
  constructor(
    private readonly store: MessageStore,
    private readonly subscriptionStore: SubscriptionStore,
    private readonly notifier: ChangeAnnouncer,
    private readonly subscriptions: Subscriptions,
    private readonly callers: CallerDirectory,
    private readonly counters: MessageCounters,
  ) {}

  /**
   * Appends the message to the log (one row however many will read it), then wakes the waiting polls
   * it is addressed to. A saga reply (key `__Response` with a SagaId) is exempt from the sender's
   * message authorizations only while the sender has an unanswered request of that saga.
   */
  async send(sender: Caller, input: SendInput, options: SendOptions = { authorize: true }): Promise<void> {
    const scope = parseScope(input.scope);
    if (!input.key) throw hubError('MissingMessageKey');
    checkScopeArgs(scope, input.args);
    const refusal = options.authorize
      ? messageRefusal(sender.credential, { scopeName: scope, args: input.args, key: input.key })
      : undefined;
    const isSagaReply = input.key === SAGA_RESPONSE_KEY && !!input.sagaId;
    if (refusal && !isSagaReply) throw hubError('MessageNotAuthorized', refusal);
    const connectionId = await this.callers.connectionId(sender);
    const message = {
      senderConnectionId: connectionId,
      senderType: senderType(sender, options.viaHub === true),
      senderFriendlyName: sender.friendlyName,
      scope: ScopeType[scope],
      args: JSON.stringify(input.args),
      sagaId: input.sagaId ?? null,
      key: input.key,
      data: JSON.stringify(input.data ?? null),
      sentMs: Date.now(),
    };
    const id = await this.store.send(message, refusal ? { sagaReplyBy: connectionId, refusal } : {});
    // Subscribers first: the polls this send woke read and answer before the sender has its 204.
    if (this.notifier.messageSent({ id, scope: message.scope, args: input.args, senderConnectionId: connectionId })) {
      await this.notifier.wokenAnswered();
    }
  }

  /** A message the hub itself sends on an administrator's behalf (deploy): no authorization applies. */
  sendFromHub(by: Caller, toFriendlyName: string, key: string, data: unknown): Promise<void> {
    return this.send(by, { scope: 'Package', args: [toFriendlyName], key, data }, { authorize: false });
  }

  async subscribe(caller: Caller, requestedId: string | undefined): Promise<string> {
    const owner = await this.subscriptions.owner(caller, requestedId);
    return (await this.subscriptionStore.openMessages(owner, requestedId)).id;
  }

  async joinGroup(caller: Caller, group: string, requestedId: string | undefined): Promise<string> {
    const refusal = groupRefusal(caller.credential, group);
    if (refusal) throw hubError('GroupNotAuthorized', refusal);
    const owner = await this.subscriptions.owner(caller, requestedId);
    const opened = await this.subscriptionStore.openMessages(owner, requestedId, group);
    await this.subscriptions.refresh(caller, opened, 'messages');
    return opened.id;
  }

  /** Long-polls a message subscription, oldest first. Undefined when the client went away (nothing consumed). */
  poll(
    caller: Caller,
    subscriptionId: string | undefined,
    timeoutMs: number,
    limit: number,
    abort: ClientSignal,
  ): Promise<MessageRecord[] | undefined> {
    return this.subscriptions.poll(caller, subscriptionId, 'messages', timeoutMs, limit, abort, this.read);
  }

  /** What a poll reads (Subscriptions.poll): the store's take, and its records (a caller sees all it is sent). */
  private readonly read: PollRead<TakenMessages, MessageRecord> = {
    take: (subscription, limit, abort, claim) => this.store.take(subscription, limit, abort, claim),
    delivered: (taken) => taken.messages.length > 0,
    visible: (taken, caller, subscription) => {
      if (taken.missed > 0) this.counters.missed(subscription, caller, taken.missed);
      return taken.messages.map(messageRecord);
    },
  };
}
