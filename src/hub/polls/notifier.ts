/**
 * Wake-after-commit in memory: one waiter per waiting poll, indexed by what it listens for (StateObject
 * names plus a list of wildcard filters; message addresses plus everyone for All and Others). Only
 * waiting polls are here: a subscription nobody polls costs nothing at write time.
 */
import type { MessageAddresses, MessageTargets, SentMessage } from '../messageAddresses.js';
import { visitTargets } from '../messageAddresses.js';
import { matchesPattern } from '../access/patterns.js';
import type { StateObjectChange } from '../ports/stateObjects.js';
import type { StateObjectPatterns } from '../ports/stateObjectPatterns.js';
import { Waiter } from './waiter.js';
import type { PollInterest, WakeUps } from './wakeUps.js';

/** Shared by every entry that has none: a waiting poll holds as little as it can. */
const NONE: never[] = [];

interface Entry {
  key: string;
  waiter: Waiter;
  /** StateObject subscriptions: every filter, its `*` patterns as the store gives them back. */
  patterns: StateObjectPatterns[];
  /** Where the entry is indexed, to take it out again. */
  names: string[];
  wildcard: boolean;
  addresses: string[];
  connectionId: string | undefined;
  /** When it registered (epoch ms). */
  since: number;
  /** Its place among every process's polls of the key (PollsElsewhere.claim); 0 until known. */
  order: number;
  /** The latest order claimed elsewhere while its own was not known yet. */
  newer: number;
}

const addressKeys = (a: MessageAddresses): string[] => {
  const keys = [`c:${a.connectionId}`, `f:${a.friendlyName}`, `s:${a.sentinelName}`];
  if (a.isPackage) keys.push(`p:${a.packageName}`);
  for (const group of a.groups.keys()) keys.push(`g:${group}`);
  return keys;
};

/**
 * Who waits under one index key: the entry itself, or a Set once several do. Most keys (an exact
 * StateObject name, a ConnectionId, a friendly name) have a single waiting poll, and a Set of one would
 * cost it ~150 B while it waits.
 */
type Listed = Entry | Set<Entry>;

function addToIndex(index: Map<string, Listed>, key: string, entry: Entry): void {
  const listed = index.get(key);
  if (listed === undefined) index.set(key, entry);
  else if (listed instanceof Set) listed.add(entry);
  else if (listed !== entry) index.set(key, new Set([listed, entry]));
}

function removeFromIndex(index: Map<string, Listed>, key: string, entry: Entry): void {
  const listed = index.get(key);
  if (listed === entry) index.delete(key);
  else if (listed instanceof Set) {
    listed.delete(entry);
    if (listed.size === 0) index.delete(key);
  }
}

export class Notifier implements WakeUps {
  private readonly entries = new Map<string, Entry>();
  private readonly byName = new Map<string, Listed>();
  private readonly wildcards = new Set<Entry>();
  private readonly byAddress = new Map<string, Listed>();
  private readonly messageWaiters = new Set<Entry>();
  private readonly logWaiters = new Set<Entry>();
  /** Waiters signalled so far (tells a write whether it woke anyone). */
  private woken = 0;

  /** Registers the waiter of a subscription (or log follower); an older waiter of the same key is superseded. */
  register(key: string, interest: PollInterest): Waiter {
    const old = this.entries.get(key);
    if (old) {
      old.waiter.end('superseded');
      this.unindex(old);
    }
    const entry: Entry = {
      key,
      waiter: new Waiter(),
      patterns: NONE,
      names: NONE,
      wildcard: false,
      addresses: NONE,
      connectionId: undefined,
      since: Date.now(),
      order: 0,
      newer: 0,
    };
    this.index(entry, interest);
    this.entries.set(key, entry);
    return entry.waiter;
  }

  /** A filter or group was added to a subscription whose poll may be waiting: listen for it too. */
  update(key: string, interest: PollInterest): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.unindex(entry);
    this.index(entry, interest);
  }

  release(key: string, waiter: Waiter): void {
    const entry = this.entries.get(key);
    if (entry?.waiter !== waiter) return;
    this.unindex(entry);
    this.entries.delete(key);
  }

  ordered(key: string, waiter: Waiter, order: number): void {
    const entry = this.entries.get(key);
    if (entry?.waiter !== waiter) return;
    entry.order = order;
    if (entry.newer > order) this.supersede(entry);
  }

  claimedElsewhere(key: string, order: number): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    if (entry.order === 0) entry.newer = Math.max(entry.newer, order);
    else if (entry.order < order) this.supersede(entry);
  }

  /** A newer poll of the key waits on another process: this one answers now and goes. */
  private supersede(entry: Entry): void {
    entry.waiter.end('superseded');
    this.unindex(entry);
    this.entries.delete(entry.key);
  }

  /**
   * Resolves once the polls woken so far have read and answered, as far as that happens in this turn:
   * their reads are flushed right after the waking commit (store/sqlite/database/batch.ts) and their answers follow in
   * microtasks, so this waits until the microtask queue is empty (a tick queued from a microtask runs
   * only then). A writer awaits it before answering its own client: subscribers first, then the 204.
   */
  wokenAnswered(): Promise<void> {
    return new Promise((resolve) => queueMicrotask(() => process.nextTick(resolve)));
  }

  /** Call only after the commit of the change. True when it woke a waiting poll. */
  stateObjectChanged(object: StateObjectChange): boolean {
    const before = this.woken;
    const matches = (p: StateObjectPatterns) =>
      matchesPattern(p.name, object.name) &&
      matchesPattern(p.sentinel, object.sentinelName) &&
      matchesPattern(p.package, object.packageName) &&
      matchesPattern(p.type, object.type);
    const exact = this.byName.get(object.name);
    if (exact instanceof Set) {
      for (const entry of exact) if (entry.patterns.some(matches)) this.signal(entry);
    } else if (exact?.patterns.some(matches)) {
      this.signal(exact);
    }
    for (const entry of this.wildcards) if (entry.patterns.some(matches)) this.signal(entry);
    return this.woken !== before;
  }

  /** Call only after the commit of the send. Group membership times are checked by the read, not here. True when it woke a waiting poll. */
  messageSent(message: SentMessage): boolean {
    const before = this.woken;
    visitTargets(message, this.wakeTargets, undefined);
    return this.woken !== before;
  }

  private signal(entry: Entry): void {
    this.woken++;
    entry.waiter.signal();
  }

  /** Wakes the waiting polls under an address key; never ends the visit. */
  private wakeAddress(key: string): boolean {
    const listed = this.byAddress.get(key);
    if (listed instanceof Set) for (const entry of listed) this.signal(entry);
    else if (listed) this.signal(listed);
    return false;
  }

  /** Each target of a message's scope (messageAddresses.ts) as the waiting polls it wakes. */
  private readonly wakeTargets: MessageTargets<undefined> = {
    all: () => {
      for (const entry of this.messageWaiters) this.signal(entry);
      return false;
    },
    others: (sender) => {
      for (const entry of this.messageWaiters) if (entry.connectionId !== sender) this.signal(entry);
      return false;
    },
    group: (name) => this.wakeAddress(`g:${name}`),
    sentinel: (name) => this.wakeAddress(`s:${name}`),
    friendlyName: (name) => this.wakeAddress(`f:${name}`),
    connectionId: (id) => this.wakeAddress(`c:${id}`),
    packageName: (name) => this.wakeAddress(`p:${name}`),
  };

  /** Call only after the commit of the log entry. */
  logWritten(): void {
    for (const entry of this.logWaiters) entry.waiter.signal();
  }

  /** Wakes these keys whatever they listen for (a new filter has news for its own subscription). */
  wake(keys: Iterable<string>): void {
    for (const key of keys) this.entries.get(key)?.waiter.signal();
  }

  /** Shutdown: every waiting poll answers now. */
  endAll(): void {
    for (const entry of this.entries.values()) entry.waiter.end('closing');
  }

  isWaiting(key: string): boolean {
    return this.entries.has(key);
  }

  waitingIds(): string[] {
    return [...this.entries.keys()];
  }

  waitingSince(since: number): string[] {
    const keys: string[] = [];
    for (const entry of this.entries.values()) if (entry.since < since) keys.push(entry.key);
    return keys;
  }

  get waitingCount(): number {
    return this.entries.size;
  }

  private index(entry: Entry, interest: PollInterest): void {
    if (interest.kind === 'logs') {
      this.logWaiters.add(entry);
    } else if (interest.kind === 'state_objects') {
      entry.patterns = interest.filters;
      entry.wildcard = entry.patterns.some((p) => p.name.includes('*'));
      // Exactly as long as needed (map sizes its result; a pushed-to array reserves 17 slots).
      const names = entry.patterns.filter((p) => !p.name.includes('*')).map((p) => p.name);
      if (names.length > 0) entry.names = names.length > 1 ? [...new Set(names)] : names;
      for (const name of entry.names) addToIndex(this.byName, name, entry);
      if (entry.wildcard) this.wildcards.add(entry);
    } else {
      entry.connectionId = interest.addresses.connectionId;
      entry.addresses = addressKeys(interest.addresses);
      for (const key of entry.addresses) addToIndex(this.byAddress, key, entry);
      this.messageWaiters.add(entry);
    }
  }

  private unindex(entry: Entry): void {
    for (const name of entry.names) removeFromIndex(this.byName, name, entry);
    for (const key of entry.addresses) removeFromIndex(this.byAddress, key, entry);
    this.wildcards.delete(entry);
    this.messageWaiters.delete(entry);
    this.logWaiters.delete(entry);
    entry.names = NONE;
    entry.addresses = NONE;
    entry.patterns = NONE;
    entry.wildcard = false;
  }
}
