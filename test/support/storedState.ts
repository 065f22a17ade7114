/**
 * A digest of everything stored that a request could change, for "changes nothing" assertions: every
 * table's rows, read through a separate read-only connection. Clocks (`*_ms` columns: idle timers,
 * heartbeats) move on their own and are left out, as is `pending_token` (an answer's delivery settles a
 * moment after the answer: hub/polls/deliveries.ts); a row added or removed still changes the digest.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import path from 'node:path';

export interface StoredState {
  digest(): string;
  close(): void;
}

export function storedStateOf(dataDir: string): StoredState {
  const reader = new Database(path.join(dataDir, 'hub.db'), { readonly: true });
  return {
    digest() {
      const tables = reader
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
        .all() as { name: string }[];
      const hash = createHash('sha256');
      for (const { name } of tables) {
        const columns = (reader.prepare(`select name from pragma_table_info(?)`).all(name) as { name: string }[])
          .map((c) => c.name)
          .filter((c) => !c.endsWith('_ms') && c !== 'pending_token');
        if (columns.length === 0) continue;
        const list = columns.map((c) => `"${c}"`).join(', ');
        // The sweeper's heartbeat is a clock kept as a row.
        const where = name === 'hub_settings' ? ` where key not like '%\\_ms' escape '\\'` : '';
        const rows = reader.prepare(`select ${list} from "${name}"${where} order by ${list}`).raw().all();
        hash.update(
          `${name}:${JSON.stringify(rows, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64') : typeof v === 'bigint' ? String(v) : v))}`,
        );
      }
      return hash.digest('hex');
    },
    close: () => reader.close(),
  };
}
