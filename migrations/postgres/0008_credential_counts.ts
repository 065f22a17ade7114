import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * How many subscriptions each credential holds, kept by the database itself (issue 22: counting them
 * under a lock made subscribing slower as they grew, ~220/s at 100,000). Statement-level triggers with
 * transition tables keep the count for every insert and delete, whoever does it (a subscribe, an
 * unsubscribe, the sweeper, `hub migrate`): one update per credential a statement touches, not one per
 * row. A subscribe's insert locks its credential's row until it commits, which is what makes the cap
 * exact across processes (store/postgres/ports/subscriptions.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `create table credential_subscriptions (credential_name text collate "C" primary key, n integer not null)`,
    `insert into credential_subscriptions (credential_name, n)
       select credential_name, count(*) from subscriptions group by credential_name`,
    `create function hub_count_subscriptions_added() returns trigger language plpgsql as $$
     begin
       insert into credential_subscriptions as c (credential_name, n)
         select credential_name, count(*) from added group by credential_name
         on conflict (credential_name) do update set n = c.n + excluded.n;
       return null;
     end $$`,
    `create function hub_count_subscriptions_removed() returns trigger language plpgsql as $$
     begin
       update credential_subscriptions c set n = c.n - g.n
         from (select credential_name, count(*) as n from removed group by credential_name) g
         where c.credential_name = g.credential_name;
       return null;
     end $$`,
    `create trigger subscriptions_added after insert on subscriptions referencing new table as added
       for each statement execute function hub_count_subscriptions_added()`,
    `create trigger subscriptions_removed after delete on subscriptions referencing old table as removed
       for each statement execute function hub_count_subscriptions_removed()`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
