/** Sending messages to scopes, message subscriptions and groups, and long-polling the queues. */
import { badRequest, HubError } from '../errors.js';
import type { TransactionBatcher } from '../db/batch.js';
import type { MessageStatements } from '../store/messageStatements.js';
import { groupRefusal, messageRefusal } from './authorization.js';
import type { Caller, CallerDirectory } from './caller.js';
import { isPackageCaller, SenderType } from './caller.js';
import type { Notifier } from './notifier.js';
import type { MessageRecord } from './records.js';
import { messageRecord } from './records.js';
import { checkScopeArgs, parseScope, ScopeType, targetOf } from './scope.js';
import type { Subscriptions } from './subscriptions.js';

export interface SendInput {
  scope: unknown;
  args: string[];
  key: string;
  data: unknown;
  sagaId?: string | null;
}

/** The key of a saga reply (wire.md); replies are not subject to message authorizations. */
export const SAGA_RESPONSE_KEY = '__Response';

export interface MessageCounters {
  dropped(count: number): void;
}

export class Messages {
  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly statements: MessageStatements,
    private readonly notifier: Notifier,
    private readonly subscriptions: Subscriptions,
    private readonly callers: CallerDirectory,
    private readonly queueLimit: number,
    private readonly counters: MessageCounters,
  ) {}

  /** Queues the message for every target subscription (one transaction), then wakes them. */
  async send(sender: Caller, input: SendInput, options = { authorize: true }): Promise<number> {
    const scope = parseScope(input.scope);
    if (!input.key) throw badRequest('MissingParameter', "The message key ('key' or 'Key') is required.");
    checkScopeArgs(scope, input.args);
    const isSagaReply = input.key === SAGA_RESPONSE_KEY && !!input.sagaId;
    if (options.authorize && !isSagaReply) {
      const refusal = messageRefusal(sender.credential, { scopeName: scope, args: input.args, key: input.key });
      if (refusal) throw new HubError(403, 'MessageNotAuthorized', 'This message is not authorized.', refusal);
    }
    const connectionId = await this.callers.connectionId(sender);
    const target = targetOf(scope, input.args, connectionId);
    const { woken, dropped } = await this.batcher.run(() => {
      const ids = this.statements.queue(
        {
          sender_connection_id: connectionId,
          sender_type: isPackageCaller(sender) ? SenderType.PackageHttp : SenderType.ConsumerHttp,
          sender_friendly_name: sender.friendlyName,
          scope: ScopeType[scope],
          args: JSON.stringify(input.args),
          saga_id: input.sagaId ?? null,
          key: input.key,
          data: JSON.stringify(input.data ?? null),
          sent_ms: Date.now(),
        },
        target,
      );
      return { woken: ids, dropped: this.statements.bound(ids, this.queueLimit) };
    });
    if (dropped > 0) this.counters.dropped(dropped);
    this.notifier.wake(woken);
    return woken.length;
  }

  /** A message the hub itself sends on an administrator's behalf (deploy): no authorization applies. */
  sendFromHub(by: Caller, toFriendlyName: string, key: string, data: unknown): Promise<number> {
    return this.send(by, { scope: 'Package', args: [toFriendlyName], key, data }, { authorize: false });
  }

  async subscribe(caller: Caller, requestedId: string | undefined): Promise<string> {
    return this.subscriptions.open(caller, 'messages', requestedId, (id) => id);
  }

  async joinGroup(caller: Caller, group: string, requestedId: string | undefined): Promise<string> {
    const refusal = groupRefusal(caller.credential, group);
    if (refusal) throw new HubError(403, 'GroupNotAuthorized', 'Joining this group is not authorized.', refusal);
    return this.subscriptions.open(caller, 'messages', requestedId, (id) => {
      this.statements.joinGroup(id, group);
      return id;
    });
  }

  /** Long-polls a message queue, oldest first. Undefined when the client went away (nothing consumed). */
  async poll(
    caller: Caller,
    subscriptionId: string | undefined,
    timeoutMs: number,
    limit: number,
    abort: AbortSignal,
  ): Promise<MessageRecord[] | undefined> {
    return this.subscriptions.poll(caller, subscriptionId, 'messages', timeoutMs, abort, (id) =>
      this.statements.take(id, limit).map(messageRecord),
    );
  }
}
