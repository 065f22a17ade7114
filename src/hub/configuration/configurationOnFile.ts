/**
 * The configuration in SQLite mode: the XML file is the configuration (the administrator's), memory
 * holds it for every request, and the tables keep its history. Each change: the new text is written
 * beside the file and fsynced, the version is committed to the history table, the file is renamed into
 * place, and only then is the in-memory copy swapped. A failure at any step undoes the steps before it:
 * file, tables and memory stay on one version. Every change runs under the base class's FIFO mutex
 * and reads what it builds on (the file, or memory) inside it.
 *
 * A management write edits the file in place (xmlEdit.ts). It refuses (409) when the file on disk is no
 * longer the text the hub last applied or wrote (a hand edit, or `POST configuration` not yet reloaded):
 * applying on top would either drop that change or apply it unasked.
 */
import { readConfigurationText, stageFile } from '../../config/configFile.js';
import type { HubConfiguration } from '../../config/model.js';
import { editTextOffLoop } from '../../config/offLoop.js';
import { validateConfiguration } from '../../config/validate.js';
import { hubError } from '../../errors.js';
import type { ChangeOrigin, ReadDocument, Reloaded } from './configuration.js';
import { Configuration, sameGroups, yieldToLoop } from './configuration.js';
import type { ConfigurationStore, ConfigurationVersion } from '../ports/configuration.js';

const pendingFileConflict = () => hubError('ConfigurationFilePending');

export class FileConfiguration extends Configuration {
  constructor(
    private readonly history: ConfigurationStore,
    private readonly configPath: string,
    initial: HubConfiguration,
    initialText: string,
  ) {
    super(initial, initialText);
  }

  async recordStart(origin: ChangeOrigin): Promise<void> {
    await this.history.applied(
      { writtenBy: origin.by, reason: origin.reason, applied: true, text: this.appliedText },
      this.current,
      { unlessNewest: true },
    );
  }

  /** The file's text as it is on disk ('' when there is none). */
  async readText(): Promise<string> {
    return (await readConfigurationText(this.configPath)) ?? '';
  }

  /** Applies the file as it is on disk now; `read` throws, changing nothing, when there is no file. */
  reload(read: ReadDocument, origin: ChangeOrigin): Promise<Reloaded | undefined> {
    return this.changes.runExclusive(async () => {
      const text = await readConfigurationText(this.configPath);
      if (text === this.appliedText) return undefined;
      const next = await read(text); // throws when there is no file
      validateConfiguration(next);
      await this.history.applied(
        { writtenBy: origin.by, reason: origin.reason, applied: true, text: text as string },
        next,
        { unlessNewest: false },
      );
      const before = this.current;
      this.swap(next, text as string);
      return { before, after: next };
    });
  }

  saveText(text: string, origin: ChangeOrigin): Promise<void> {
    return this.changes.runExclusive(() =>
      this.writeFile(text, { writtenBy: origin.by, reason: origin.reason, applied: false, text }),
    );
  }

  /** The edited file was checked to read back as the new configuration (a restart gives it). */
  update(change: (draft: HubConfiguration) => void, origin: ChangeOrigin): Promise<HubConfiguration> {
    return this.changes.runExclusive(async () => {
      const onDisk = await readConfigurationText(this.configPath);
      if (onDisk !== undefined && onDisk !== this.appliedText) throw pendingFileConflict();
      const draft = this.draft(change);
      validateConfiguration(draft);
      await yieldToLoop();
      // The edit is read back and compared with the draft before anything is written. A file removed
      // behind the hub's back is written again from the applied text.
      const text = await editTextOffLoop(this.appliedText, draft);
      await this.writeFile(text, { writtenBy: origin.by, reason: origin.reason, applied: true, text }, draft);
      return this.current;
    });
  }

  /** Staged file, committed version, rename, swap: each failure undoes what came before it. */
  private async writeFile(text: string, version: ConfigurationVersion, apply?: HubConfiguration): Promise<void> {
    const staged = await stageFile(this.configPath, text);
    let versionId: number;
    try {
      versionId = await this.history.record(version, apply && !sameGroups(apply, this.current) ? apply : undefined);
    } catch (error) {
      await staged.discard();
      throw error;
    }
    try {
      // A management write checked the file before its edit; a hand edit saved since is not overwritten.
      if (!(await staged.install(apply ? this.appliedText : undefined))) throw pendingFileConflict();
    } catch (error) {
      await staged.discard();
      // Back to the version before: the history row goes, and the groups are those of memory again.
      await this.history.revert(versionId, apply ? this.current : undefined).catch(() => undefined);
      throw error;
    }
    if (apply) this.swap(apply, text);
  }
}
