/**
 * What gap-free numbering costs on this machine (issue 22): write batches per second into the message
 * log with its head row (store/postgres/connections/logs.ts, writers of one log take turns for one statement plus
 * COMMIT) against the same insert numbered by a plain sequence (writers in parallel, numbers that can
 * be skipped by a reader), at 1, 2 and 4 concurrent writers, `synchronous_commit=on`.
 *
 *   node --import tsx bench/postgresHeads.ts   (HUB_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 *
 * It creates a scratch database, prints a table, and drops the database. Other load on the box moves
 * the figures; compare the two columns of one run.
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { createPool, numberTypes } from '../src/store/postgres/connections/pool.js';
import { migratePostgres } from '../src/store/postgres/connections/migrate.js';
import { appendMessages } from '../src/store/postgres/connections/logs.js';
import type { NewMessage } from '../src/store/postgres/connections/logs.js';

const ADMIN = process.env.HUB_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
let finished = false;
const log = {
  warn: (object: object, message: string) => {
    if (!finished) console.warn(message, object);
  },
};

const row = (i: number): NewMessage => ({
  sender_connection_id: 'c',
  sender_type: 0,
  sender_friendly_name: 'Consumer/Bench',
  scope: 0,
  args: '[]',
  saga_id: null,
  key: 'K',
  data: `{"i":${i}}`,
  sent_ms: Date.now(),
});

const SEQUENCE_INSERT = `
  insert into bench_messages (sender_connection_id, sender_type, sender_friendly_name, scope, args, saga_id, key, data, sent_ms)
  select * from unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[])
  returning id`;

async function run(
  pool: pg.Pool,
  writers: number,
  rowsPerBatch: number,
  variant: 'head' | 'sequence',
  seconds = SECONDS,
): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let batches = 0;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      const client = await pool.connect();
      try {
        while (Date.now() < deadline) {
          const rows = Array.from({ length: rowsPerBatch }, (_, i) => row(i));
          await client.query('begin');
          if (variant === 'head') await appendMessages(client, rows);
          else {
            const c = <K extends keyof NewMessage>(k: K) => rows.map((r) => r[k]);
            await client.query({
              name: 'bench_sequence',
              text: SEQUENCE_INSERT,
              values: [
                c('sender_connection_id'),
                c('sender_type'),
                c('sender_friendly_name'),
                c('scope'),
                c('args'),
                c('saga_id'),
                c('key'),
                c('data'),
                c('sent_ms'),
              ],
            });
          }
          await client.query('commit');
          batches += 1;
        }
      } finally {
        client.release();
      }
    }),
  );
  return batches / seconds;
}

const name = `hub_bench_${crypto.randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`create database ${name}`);
const url = new URL(ADMIN);
url.pathname = `/${name}`;
try {
  const migrator = new Kysely({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), types: numberTypes }) }),
  });
  await migratePostgres(migrator);
  await migrator.destroy();
  const pool = createPool({ url: url.toString(), role: 'bench', sync: 'full', lockWaitMs: 10_000, log, max: 8 });
  await pool.query(`create table bench_messages (id bigserial primary key, sender_connection_id text not null, sender_type integer not null,
    sender_friendly_name text not null, scope integer not null, args text not null, saga_id text, key text not null, data text not null,
    sent_ms bigint not null)`);
  console.log(`| writers | rows/batch | head row: batches/s (rows/s) | plain sequence: batches/s (rows/s) |`);
  console.log(`|---|---|---|---|`);
  for (const rowsPerBatch of [10, 50]) {
    for (const writers of [1, 2, 4]) {
      await run(pool, writers, rowsPerBatch, 'head', 1); // warm-up: connections, prepared statements
      await run(pool, writers, rowsPerBatch, 'sequence', 1);
      const head = await run(pool, writers, rowsPerBatch, 'head');
      const sequence = await run(pool, writers, rowsPerBatch, 'sequence');
      const f = (b: number) => `${Math.round(b)} (${Math.round(b * rowsPerBatch)})`;
      console.log(`| ${writers} | ${rowsPerBatch} | ${f(head)} | ${f(sequence)} |`);
    }
  }
  finished = true;
  await pool.end();
} finally {
  finished = true;
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
