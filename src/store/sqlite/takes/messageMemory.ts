/**
 * The message log's latest rows as a take reads them (messageTake.ts), kept by the store that writes
 * them: a take whose cursor is among them reads the log above it from here, not from the file (a
 * fan-out's thousand woken takes read the same new rows), each row's addressing parsed once. What is
 * addressed to the subscription, and the writes the take makes, are as from the file. Holds only what
 * the file does: a send adds its row; the trim that keeps the log at its count drops the rows it
 * deletes; the sweep, or a rollback, starts it anew (store/sqlite/database/batch.ts, whenRolledBack);
 * a restart starts empty. The test suite checks every read from memory against the file (verifyTakes.ts).
 */
import type { SentMessage } from '../../../hub/messageAddresses.js';
import type { Message } from '../../../hub/ports/messages.js';
import { ScopeType } from '../../../hub/scope.js';

/** All and Others reach by subscription, not by name: their args need not be parsed. */
export const namesTargets = (scope: number) => scope !== ScopeType.All && scope !== ScopeType.Others;
export const NO_ARGS: string[] = [];

/** A row of the log: the message, and what addressing reads of it. */
export interface LoggedMessage {
  message: Message;
  sent: SentMessage;
}

/** The rows kept at most, by count and by the characters of their data and args: as the pushes (takeMemory.ts, MAX_PUSHES). */
const MAX_ROWS = 64;
const MAX_CHARACTERS = 1024 * 1024;

const charactersOf = (m: Message) => m.data.length + m.args.length;

export class MessageMemory {
  /**
   * The log's rows above `from`, oldest first: every row of the file with a larger id is one of them.
   * `from` is Infinity after a reset, until the next send (a new row's id is above every row's in the file).
   */
  private rows: LoggedMessage[] = [];
  private from: number;
  private characters = 0;

  /** `lastId`: the file's largest message id at the start. */
  constructor(lastId: number) {
    this.from = lastId;
  }

  /** Inside a transaction: a send's row, the log's newest. */
  sent(message: Message): void {
    if (this.from === Infinity) this.from = message.id - 1;
    const args = namesTargets(message.scope) ? (JSON.parse(message.args) as string[]) : NO_ARGS;
    this.rows.push({
      message,
      sent: { id: message.id, scope: message.scope, args, senderConnectionId: message.senderConnectionId },
    });
    this.characters += charactersOf(message);
    if (this.rows.length > MAX_ROWS || this.characters > MAX_CHARACTERS)
      this.trimmed(this.rows[(this.rows.length >> 1) - 1].message.id);
  }

  /** Inside a transaction: the rows up to `id` left the log (or are no longer kept here). */
  trimmed(id: number): void {
    if (id <= this.from) return;
    const kept = this.rows.findIndex((r) => r.message.id > id);
    this.rows = kept < 0 ? [] : this.rows.slice(kept);
    this.characters = this.rows.reduce((sum, r) => sum + charactersOf(r.message), 0);
    this.from = id;
  }

  /**
   * Rows left the log by other means than the trim (the sweep), or a transaction rolled back: nothing
   * is kept until the next send. Reads no SQL: after a rollback it runs where the batch handles an error.
   */
  changed(): void {
    this.rows = [];
    this.characters = 0;
    this.from = Infinity;
  }

  /** The log's rows above `cursor`, oldest first, when they are all here; undefined when the file must be read. */
  after(cursor: number): LoggedMessage[] | undefined {
    if (cursor < this.from) return undefined;
    let i = this.rows.length;
    while (i > 0 && this.rows[i - 1].message.id > cursor) i--;
    return i === this.rows.length ? [] : this.rows.slice(i);
  }
}
