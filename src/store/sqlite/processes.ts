/**
 * The process registry on SQLite (the SQLite ProcessRegistryStore): one hub holds a data directory
 * (dataDirectory.ts), so the list is this process, kept in memory.
 */
import type {
  HubProcessReport,
  HubProcessRow,
  ProcessRegistryStore,
  StoredHubProcess,
} from '../../hub/ports/processes.js';

export class SqliteProcessRegistryStore implements ProcessRegistryStore {
  #self: StoredHubProcess | undefined;

  heartbeat(report: HubProcessReport): Promise<void> {
    this.#self = { ...report, heartbeatMs: Date.now() };
    return Promise.resolve();
  }

  list(silentMs: number): Promise<HubProcessRow[]> {
    const self = this.#self;
    const ageMs = self ? Date.now() - self.heartbeatMs : 0;
    return Promise.resolve(self && ageMs <= silentMs ? [{ ...self, heartbeatAgeMs: ageMs }] : []);
  }

  remove(id: string | undefined): Promise<void> {
    if (id !== undefined && id === this.#self?.id) this.#self = undefined;
    return Promise.resolve();
  }
}
