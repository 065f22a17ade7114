/** The configuration tables: the applied XML configuration, replaced as a whole in one transaction. */
import type { Kysely } from 'kysely';
import type { HubConfiguration, Setting } from '../config/model.js';
import type { Database, SettingsTable } from '../db/schema.js';

type Executor = Kysely<Database>;

const bit = (b: boolean) => (b ? 1 : 0);

function settingRows(
  ownerKind: SettingsTable['owner_kind'],
  sentinelName: string,
  ownerName: string,
  settings: Setting[],
): SettingsTable[] {
  return settings.map((s, position) => ({
    owner_kind: ownerKind,
    sentinel_name: sentinelName,
    owner_name: ownerName,
    key: s.key,
    kind: s.kind,
    value: s.value,
    position,
  }));
}

/** Runs `insert` over chunks of rows: SQLite limits the number of bound values in one statement. */
async function inChunks<R>(rows: R[], insert: (chunk: R[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await insert(rows.slice(i, i + 200));
}

/** Replaces every configuration table with `config`. Call inside a transaction. */
export async function replaceConfiguration(trx: Executor, config: HubConfiguration): Promise<void> {
  for (const table of [
    'package_instance_imports',
    'settings',
    'package_instance_groups',
    'package_instances',
    'sentinels',
    'settings_groups',
    'credentials',
  ] as const) {
    await trx.deleteFrom(table).execute();
  }

  await inChunks(config.credentials.map((c) => ({
      name: c.name,
      access_key: c.accessKey,
      enabled: bit(c.enable),
      enable_control_hub: bit(c.enableControlHub),
      enable_management_api: bit(c.enableManagementAPI),
      enable_developer_access: bit(c.enableDeveloperAccess),
      authorizations: JSON.stringify(c.authorizations),
    })), (chunk) => trx.insertInto('credentials').values(chunk).execute());
  await inChunks(config.settingsGroups.map((g) => ({ name: g.name })), (chunk) => trx.insertInto('settings_groups').values(chunk).execute());
  await inChunks(config.settingsGroups.flatMap((g) => settingRows('group', '', g.name, g.settings)), (chunk) => trx.insertInto('settings').values(chunk).execute());
  await inChunks(config.sentinels.map((s) => ({ name: s.name, credential_name: s.credential })), (chunk) => trx.insertInto('sentinels').values(chunk).execute());

  const instances = config.sentinels.flatMap((s) => s.packages.map((p) => ({ sentinel: s.name, p })));
  await inChunks(instances.map(({ sentinel, p }) => ({
      sentinel_name: sentinel,
      name: p.name,
      package_file: p.packageFile ?? null,
      enabled: bit(p.enable),
      credential_name: p.credential ?? null,
      auto_start: bit(p.autoStart),
      recovery_options: p.recoveryOptions ? JSON.stringify(p.recoveryOptions) : null,
    })), (chunk) => trx.insertInto('package_instances').values(chunk).execute());
  await inChunks(instances.flatMap(({ sentinel, p }) =>
      p.groups.map((g) => ({ sentinel_name: sentinel, instance_name: p.name, group_name: g })),
    ), (chunk) => trx.insertInto('package_instance_groups').values(chunk).execute());
  await inChunks(instances.flatMap(({ sentinel, p }) => settingRows('instance', sentinel, p.name, p.settings)), (chunk) => trx.insertInto('settings').values(chunk).execute());
  await inChunks(instances.flatMap(({ sentinel, p }) =>
      p.imports.map((g, position) => ({
        sentinel_name: sentinel,
        instance_name: p.name,
        position,
        settings_group_name: g,
      })),
    ), (chunk) => trx.insertInto('package_instance_imports').values(chunk).execute());

  await trx
    .insertInto('hub_settings')
    .values([
      { key: 'listen_uris', value: JSON.stringify(config.listenUris) },
      { key: 'recovery_options', value: JSON.stringify(config.recoveryOptions) },
    ])
    .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
    .execute();
}

export async function readHubSetting(db: Executor, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('hub_settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function writeHubSetting(db: Executor, key: string, value: string): Promise<void> {
  await db
    .insertInto('hub_settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
