/**
 * The configuration in PostgreSQL mode: the document lives in the database (ConfigurationDocumentStore,
 * one row: text, version, and the text `POST configuration` sent that no reload applied yet), shared by
 * every hub process; memory holds the version this process applied. Every change runs under the base
 * class's FIFO mutex, builds on the version in memory and commits only on that version
 * (compare-and-set): when another process changed the document since, the change reads the newer
 * version, applies it, and is built again on it, as a change queued behind another in one process is.
 * A committed change is announced (NOTIFY); every process then re-reads the row (`refresh`), also on a
 * fallback timer and after its listening connection reconnects, and applies a version it has not.
 *
 * A management write refuses (409 ConfigurationPending) while a posted document awaits its reload, as
 * it does for a pending file in SQLite mode. The file (HUB_CONFIG) is read only by the first start,
 * which imports it (configurationSharedStart.ts); the hub never writes it.
 */
import type { Logger } from 'pino';
import type { HubConfiguration } from '../../config/model.js';
import { editTextOffLoop, parseConfigurationFileOffLoop } from '../../config/offLoop.js';
import { validateConfiguration } from '../../config/validate.js';
import { hubError } from '../../errors.js';
import type { ChangeOrigin, ReadDocument, Reloaded } from './configuration.js';
import { Configuration, sameGroups, yieldToLoop } from './configuration.js';
import type { ConfigurationDocumentStore, ConfigurationVersion, StoredConfiguration } from '../ports/configuration.js';

/** Attempts of one change against versions other processes keep committing first. */
const MAX_ATTEMPTS = 50;

export class SharedConfiguration extends Configuration {
  private version: number;
  private pending: string | undefined;
  private watcher: NodeJS.Timeout | undefined;

  constructor(
    private readonly documents: ConfigurationDocumentStore,
    initial: HubConfiguration,
    document: StoredConfiguration,
    private readonly logger: Logger,
  ) {
    super(initial, document.text);
    this.version = document.version;
    this.pending = document.pending;
  }

  /** The start that found the document recorded nothing; the one that imported it recorded the import. */
  async recordStart(): Promise<void> {}

  async readText(): Promise<string> {
    const document = await this.documents.read();
    return document?.pending ?? document?.text ?? this.appliedText;
  }

  /** Applies the stored version if this process has not (a change made through another process). */
  refresh(): Promise<boolean> {
    return this.changes.runExclusive(async () => (await this.catchUp()) !== undefined);
  }

  /** The document may have changed (a notification): refresh, a failure logged (the next hint retries). */
  hint(): void {
    this.refresh().catch((error: unknown) =>
      this.logger.warn({ err: (error as Error).message }, 'configuration not re-read from the database: retrying'),
    );
  }

  /** Refreshes now and then every `everyMs` (the fallback for a notification that never came). */
  watch(everyMs: number): void {
    this.hint();
    this.watcher ??= setInterval(() => this.hint(), everyMs);
    this.watcher.unref();
  }

  stopWatching(): void {
    clearInterval(this.watcher);
    this.watcher = undefined;
  }

  /** Applies what the database holds: another process's changes, and a posted document (`read` checks it). */
  reload(read: ReadDocument, origin: ChangeOrigin): Promise<Reloaded | undefined> {
    return this.changes.runExclusive(async () => {
      const before = this.current;
      let caughtUp = await this.catchUp();
      for (let attempt = 1; this.pending !== undefined; attempt++) {
        const text = this.pending;
        const next = await read(text);
        validateConfiguration(next);
        const stored = await this.documents.replace(
          this.version,
          { text, pending: undefined },
          { writtenBy: origin.by, reason: origin.reason, applied: true, text },
          sameGroups(next, this.current) ? undefined : next,
        );
        if (stored) {
          this.apply(stored, next);
          return { before, after: next };
        }
        caughtUp = (await this.conflict(attempt)) ?? caughtUp;
      }
      return caughtUp && { before, after: this.current };
    });
  }

  saveText(text: string, origin: ChangeOrigin): Promise<void> {
    return this.changes.runExclusive(async () => {
      const version: ConfigurationVersion = { writtenBy: origin.by, reason: origin.reason, applied: false, text };
      for (let attempt = 1; ; attempt++) {
        const stored = await this.documents.replace(this.version, { text: this.appliedText, pending: text }, version);
        if (stored) {
          this.version = stored.version;
          this.pending = stored.pending;
          return;
        }
        await this.conflict(attempt);
      }
    });
  }

  update(change: (draft: HubConfiguration) => void, origin: ChangeOrigin): Promise<HubConfiguration> {
    return this.changes.runExclusive(async () => {
      for (let attempt = 1; ; attempt++) {
        if (this.pending !== undefined) throw hubError('ConfigurationPending');
        const draft = this.draft(change);
        validateConfiguration(draft);
        await yieldToLoop();
        const text = await editTextOffLoop(this.appliedText, draft);
        const stored = await this.documents.replace(
          this.version,
          { text, pending: undefined },
          { writtenBy: origin.by, reason: origin.reason, applied: true, text },
          sameGroups(draft, this.current) ? undefined : draft,
        );
        if (stored) {
          this.apply(stored, draft);
          return this.current;
        }
        await this.conflict(attempt);
      }
    });
  }

  /** Another process committed first: its version is applied here, and the change is built again on it. */
  private async conflict(attempt: number): Promise<Reloaded | undefined> {
    if (attempt >= MAX_ATTEMPTS)
      throw hubError(
        'DatabaseBusy',
        { engine: 'PostgreSQL' },
        `Other processes changed the configuration first ${MAX_ATTEMPTS} times; try the change again.`,
      );
    return this.catchUp();
  }

  /** Applies the stored document when its version is not this process's. Runs under the mutex. */
  private async catchUp(): Promise<Reloaded | undefined> {
    const stored = await this.documents.read();
    if (!stored || stored.version === this.version) return undefined;
    if (stored.text === this.appliedText) {
      this.version = stored.version;
      this.pending = stored.pending;
      return undefined;
    }
    const before = this.current;
    const next = (await parseConfigurationFileOffLoop(stored.text)).config;
    this.apply(stored, next);
    this.logger.info({ version: stored.version }, 'configuration changed in the database: applied');
    return { before, after: next };
  }

  private apply(stored: StoredConfiguration, config: HubConfiguration): void {
    this.swap(config, stored.text);
    this.version = stored.version;
    this.pending = stored.pending;
  }
}
