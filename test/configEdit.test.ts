/**
 * The configuration file is edited, never regenerated; pending changes on disk are never lost; every
 * version is kept; what a management write acknowledges is what a restart gives back.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { WORKER_THRESHOLD_BYTES } from '../src/config/offLoop.js';
import { constellationFile, controlHub } from './support/constellation.js';
import type { TestHub } from './support/testHub.js';
import { get, hubsStoppedAfterEach, pkg, post, startTestHub, tempDir, configFileText } from './support/testHub.js';

const hub = hubsStoppedAfterEach();

/** The lines of `after` that are not in `before`, and those of `before` gone from `after` (multiset). */
function lineDiff(before: string, after: string): { added: string[]; removed: string[] } {
  const count = (lines: string[]) => lines.reduce((m, l) => m.set(l, (m.get(l) ?? 0) + 1), new Map<string, number>());
  const a = count(before.split('\n'));
  const b = count(after.split('\n'));
  const added = [...b].flatMap(([l, n]) => Array<string>(Math.max(0, n - (a.get(l) ?? 0))).fill(l));
  const removed = [...a].flatMap(([l, n]) => Array<string>(Math.max(0, n - (b.get(l) ?? 0))).fill(l));
  return { added, removed };
}

function versions(h: TestHub) {
  const sqlite = new Database(path.join(h.dataDir, 'hub.db'), { readonly: true });
  try {
    return sqlite
      .prepare('select id, written_at, written_by, reason, applied, text from configuration_versions order by id')
      .all() as {
      id: number;
      written_at: string;
      written_by: string;
      reason: string;
      applied: number;
      text: string;
    }[];
  } finally {
    sqlite.close();
  }
}

describe('management writes edit the file in place', () => {
  it('a symbolic link stays a link: the file it points to is edited, keeping its mode', async () => {
    const elsewhere = tempDir();
    const real = path.join(elsewhere, 'real.config.xml');
    fs.writeFileSync(real, constellationFile, { mode: 0o640 });
    fs.chmodSync(real, 0o640);
    const dataDir = tempDir();
    const link = path.join(dataDir, 'hub.config.xml');
    fs.symlinkSync(real, link);
    const h = await hub({ dataDir, config: null });
    expect(
      (await post(h, 'management/credentials', controlHub, { Name: 'Linked', AccessKey: 'linked-key-0001' })).status,
    ).toBe(200);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toMatch(/<credential name="Linked"/);
    expect(fs.statSync(real).mode & 0o777).toBe(0o640);
    expect(fs.readdirSync(elsewhere)).toEqual(['real.config.xml']);
  });

  it('POST credentials adds one credential: comments, wrapper, unknown sections and spelling stay', async () => {
    const h = await hub({ config: constellationFile });
    const added = await post(h, 'management/credentials', controlHub, { Name: 'Newbie', AccessKey: 'newbie-key-0001' });
    expect(added.status).toBe(200);
    const after = configFileText(h);
    const { added: lines, removed } = lineDiff(constellationFile, after);
    expect(removed).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ {6}<credential name="Newbie" accessKey="newbie-key-0001" .*\/>$/);
    // Everything else is byte for byte what the user wrote, in place.
    expect(after.replace(`${lines[0]}\n`, '')).toBe(constellationFile);
  });

  it('an unknown attribute and single quotes on a changed element stay as written', async () => {
    const file = constellationFile.replace(
      '<credential name="StandardAccess" accessKey="standard-access-key-0001" />',
      `<credential name='StandardAccess' legacyFlag='yes' accessKey='standard-access-key-0001'\n                  enable='True' />`,
    );
    const h = await hub({ config: file });
    expect(
      (
        await post(h, 'management/credentials', controlHub, {
          Name: 'StandardAccess',
          AccessKey: "it's-a-new-key",
          Enable: true,
        })
      ).status,
    ).toBe(200);
    expect(lineDiff(file, configFileText(h))).toEqual({
      removed: [`      <credential name='StandardAccess' legacyFlag='yes' accessKey='standard-access-key-0001'`],
      added: [`      <credential name='StandardAccess' legacyFlag='yes' accessKey='it&apos;s-a-new-key'`],
    });
  });

  it('a Windows file (byte order mark, CRLF) stays one: the new credential is one CRLF line', async () => {
    const windows = `\ufeff${constellationFile.replace(/\n/g, '\r\n')}`;
    const h = await hub({ config: windows });
    expect(
      (await post(h, 'management/credentials', controlHub, { Name: 'Newbie', AccessKey: 'newbie-key-0001' })).status,
    ).toBe(200);
    expect(
      (await post(h, 'management/sentinels/MyServer/packages/HWMonitor/groups', controlHub, ['GroupA'])).status,
    ).toBe(200);
    const after = configFileText(h);
    expect(after.startsWith('\ufeff<?xml')).toBe(true);
    expect(/[^\r]\n/.test(after)).toBe(false);
    expect(lineDiff(windows, after).removed).toEqual(['          <package name="HWMonitor" enable="true" />\r']);
  });

  it('changing one credential changes only its attributes; the alias spelling is kept when recovery options change', async () => {
    const h = await hub({ config: constellationFile });
    await post(h, 'management/credentials', controlHub, {
      Name: 'StandardAccess',
      AccessKey: 'standard-access-key-0002',
    });
    let diff = lineDiff(constellationFile, configFileText(h));
    expect(diff.removed).toEqual(['      <credential name="StandardAccess" accessKey="standard-access-key-0001" />']);
    expect(diff.added).toEqual(['      <credential name="StandardAccess" accessKey="standard-access-key-0002" />']);

    const before = configFileText(h);
    const recovery = {
      RestartAfterFailure: true,
      NumberOfRetry: 5,
      ResetCounterAfterMinutes: 99,
      RestartPackageAfterSeconds: 30,
    };
    expect((await post(h, 'management/configuration/recoveryoptions', controlHub, recovery)).status).toBe(200);
    diff = lineDiff(before, configFileText(h));
    expect(diff.added).toEqual([
      '    <recoveryOptions restartAfterFailure="true" numberOfRetry="5" restCounterAfterMinutes="99" restartPackageAfterSeconds="30" />',
    ]);
  });

  it('settings, groups, instances and sentinels: only the elements concerned change', async () => {
    const h = await hub({ config: constellationFile });
    const base = 'management/sentinels/MyServer/packages/Paradox';
    // Zones comes back as it reads: the content setting stays as written; PortName changes in place.
    await post(h, `${base}/settings`, controlHub, { PortName: 'COM5', Zones: '[ "Hall", "Kitchen" ]' });
    let diff = lineDiff(constellationFile, configFileText(h));
    expect(diff).toEqual({
      removed: ['              <setting key="PortName" value="COM4" />'],
      added: ['              <setting key="PortName" value="COM5" />'],
    });
    await post(h, `${base}/groups`, controlHub, ['GroupA']);
    await post(h, 'management/sentinels', controlHub, { Name: 'Garage', Credential: 'StandardAccess' });
    await post(h, 'management/sentinels/Garage/packages', controlHub, { Name: 'Door' });
    const text = configFileText(h);
    expect(text).toContain('<!-- Recovery of packages that crash -->');
    expect(text).toContain('<fileServer enable="true" path="C:\\Program Files\\Constellation\\Server\\Web" />');
    expect(text).toContain(
      '<constellationSection xmlns="urn:Constellation.Host.Configuration.ConstellationConfigurationSection">',
    );
    expect(text.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <configSections>')).toBe(true);
    expect(text).toMatch(/<package name="Paradox" enable="true" autostart="true">\n {12}<settings>/);
    expect(text).toMatch(
      / {6}<sentinel name="Garage" credential="StandardAccess">\n {8}<packages>\n {10}<package name="Door" enable="true" autostart="true"\/>/,
    );
    expect((await call_delete(h, 'management/sentinels/Garage')).status).toBe(204);
    diff = lineDiff(constellationFile, configFileText(h));
    expect(diff.added.join('\n')).not.toMatch(/Garage|Door/);
  });
});

const call_delete = (h: TestHub, action: string) =>
  fetch(`${h.url}/rest/${action}?${new URLSearchParams({ ...controlHub })}`, { method: 'DELETE' }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }));

describe('a large file is edited off the event loop, with the same result', () => {
  it('1,000 credentials: one POST credentials changes one line, and a restart reads it back', async () => {
    const many = Array.from(
      { length: 1000 },
      (_, i) => `      <credential name="Device${i}" accessKey="device-key-${i}-0001" />`,
    ).join('\n');
    const large = constellationFile.replace('    </credentials>', `${many}\n    </credentials>`);
    expect(large.length).toBeGreaterThan(WORKER_THRESHOLD_BYTES);
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir, config: large });
    const reply = await post(first, 'management/credentials', controlHub, {
      Name: 'Device500',
      AccessKey: 'rotated-key-0001',
      EnableControlHub: true,
    });
    expect(reply.status).toBe(200);
    expect(lineDiff(large, configFileText(first))).toEqual({
      removed: ['      <credential name="Device500" accessKey="device-key-500-0001" />'],
      added: ['      <credential name="Device500" accessKey="rotated-key-0001" enableControlHub="true" />'],
    });
    await first.stop();
    const second = await hub({ dataDir });
    const device = (await get(second, 'management/credentials', controlHub, { includeAccessKeys: 'true' }))
      .json<{ Name: string; AccessKey: string }[]>()
      .find((c) => c.Name === 'Device500');
    expect(device).toMatchObject({ AccessKey: 'rotated-key-0001', EnableControlHub: true });
    // Reload and POST configuration read a large file off the event loop too, with the same answers.
    fs.writeFileSync(
      second.options.configPath,
      configFileText(second).replace('device-key-900-0001', 'device-key-900-0002'),
    );
    expect((await get(second, 'management/configuration/reload', controlHub)).status).toBe(200);
    expect(
      (
        await get(second, 'consumer/CheckAccess', {
          SentinelName: 'Consumer',
          PackageName: 'X',
          AccessKey: 'device-key-900-0002',
        })
      ).status,
    ).toBe(200);
    const broken = await post(
      second,
      'management/configuration',
      controlHub,
      configFileText(second).replace('name="Device901"', 'name="Device900"'),
      'application/xml',
    );
    expect(broken.status).toBe(400);
    expect(broken.json<{ MessageDetail: string }>().MessageDetail).toMatch(/"Device900" is declared twice/);
  });
});

describe('pending changes on disk are never lost', () => {
  it('a hand edit not yet reloaded: a management write answers 409 naming the remedy, and the edit stays', async () => {
    const h = await hub({ config: constellationFile });
    const edited = constellationFile.replace(
      '    </sentinels>',
      '      <sentinel name="HandMade" credential="StandardAccess" />\n    </sentinels>',
    );
    fs.writeFileSync(h.options.configPath, edited);
    const refused = await post(h, 'management/credentials', controlHub, {
      Name: 'Newbie',
      AccessKey: 'newbie-key-0001',
    });
    expect(refused.status).toBe(409);
    expect(refused.json<{ Message: string; MessageDetail: string }>().Message).toMatch(
      /edited by hand or sent with POST configuration/,
    );
    expect(refused.json<{ MessageDetail: string }>().MessageDetail).toMatch(/configuration\/reload/);
    expect(configFileText(h)).toBe(edited);
    // Reloading applies the edit; the write then goes through on top of it.
    expect((await get(h, 'management/configuration/reload', controlHub)).status).toBe(200);
    expect(
      (await post(h, 'management/credentials', controlHub, { Name: 'Newbie', AccessKey: 'newbie-key-0001' })).status,
    ).toBe(200);
    expect(configFileText(h)).toContain('<sentinel name="HandMade" credential="StandardAccess" />');
    expect(configFileText(h)).toContain('name="Newbie"');
  });

  it('a hand edit saved while a write is under way is not overwritten by it', async () => {
    const many = Array.from(
      { length: 1000 },
      (_, i) => `      <credential name="Device${i}" accessKey="device-key-${i}-0001" />`,
    ).join('\n');
    const large = constellationFile.replace('    </credentials>', `${many}\n    </credentials>`);
    const h = await hub({ config: large });
    for (const delayMs of [0, 5, 10, 20, 40]) {
      const writing = post(h, 'management/credentials', controlHub, {
        Name: 'Device7',
        AccessKey: `rotated-${delayMs}-0001`,
      });
      await sleep(delayMs);
      const edited = configFileText(h).replace(
        /<!-- (Recovery of packages that crash|edited by hand \d+) -->/,
        `<!-- edited by hand ${delayMs} -->`,
      );
      fs.writeFileSync(h.options.configPath, edited);
      const reply = await writing;
      expect([200, 409]).toContain(reply.status);
      // Whichever came first, the hand edit is what the file holds now.
      expect(configFileText(h) === edited, `delay ${delayMs}: ${reply.status}`).toBe(true);
      expect((await get(h, 'management/configuration/reload', controlHub)).status).toBe(200);
    }
  });

  it('a file accepted by POST configuration and not reloaded: 409, and the posted text stays', async () => {
    const h = await hub({ config: constellationFile });
    const posted = constellationFile.replace('value="COM4"', 'value="COM9"');
    expect((await post(h, 'management/configuration', controlHub, posted, 'application/xml')).status).toBe(204);
    const refused = await post(h, 'management/sentinels', controlHub, { Name: 'Garage', Credential: 'StandardAccess' });
    expect(refused.status).toBe(409);
    expect(configFileText(h)).toBe(posted);
    const history = versions(h);
    expect(history.at(-1)).toMatchObject({
      written_by: 'ControlHub',
      reason: 'POST configuration',
      applied: 0,
      text: posted,
    });
  });
});

describe('reload entry point (SIGHUP)', () => {
  it('hub.reloadConfiguration() applies the file on disk, and refuses a broken one changing nothing', async () => {
    const h = await hub({ config: constellationFile });
    fs.writeFileSync(
      h.options.configPath,
      constellationFile.replace('standard-access-key-0001', 'standard-access-key-0002'),
    );
    expect(await h.reloadConfiguration()).toBe(true);
    expect(
      (
        await get(h, 'consumer/CheckAccess', {
          SentinelName: 'Consumer',
          PackageName: 'X',
          AccessKey: 'standard-access-key-0002',
        })
      ).status,
    ).toBe(200);
    fs.writeFileSync(h.options.configPath, '<hub><credentials></hub>');
    await expect(h.reloadConfiguration()).rejects.toThrow(/not well-formed XML/);
    expect(
      (
        await get(h, 'consumer/CheckAccess', {
          SentinelName: 'Consumer',
          PackageName: 'X',
          AccessKey: 'standard-access-key-0002',
        })
      ).status,
    ).toBe(200);
    expect(versions(h).at(-1)).toMatchObject({ written_by: '(signal)', reason: 'reload', applied: 1 });
    // Reloading what is already applied changes nothing: no version, the same configuration in memory.
    fs.writeFileSync(h.options.configPath, versions(h).at(-1)?.text ?? '');
    const count = versions(h).length;
    const running = h.services.configuration.current;
    expect(await h.reloadConfiguration()).toBe(false);
    expect(versions(h)).toHaveLength(count);
    expect(h.services.configuration.current).toBe(running);
  });
});

describe('history', () => {
  it('keeps each version with time and credential, readable with SQL, and restorable by POST + reload', async () => {
    const h = await hub({ config: constellationFile });
    const before = Date.now();
    for (let i = 0; i < 12; i++) {
      expect(
        (await post(h, 'management/credentials', controlHub, { Name: `C${i}`, AccessKey: `key-number-${i}-0001` }))
          .status,
      ).toBe(200);
    }
    const history = versions(h);
    expect(history.length).toBe(13);
    expect(history[0]).toMatchObject({ written_by: '(file)', reason: 'start', applied: 1, text: constellationFile });
    expect(history[12]).toMatchObject({ written_by: 'ControlHub', reason: 'POST credentials', applied: 1 });
    expect(Date.parse(history[12].written_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(history[12].text).toBe(configFileText(h));

    // Restore the version before the third write: post it back and reload (docs/configuration.md).
    const restore = history[2].text;
    expect((await post(h, 'management/configuration', controlHub, restore, 'application/xml')).status).toBe(204);
    expect((await get(h, 'management/configuration/reload', controlHub)).status).toBe(200);
    expect(configFileText(h)).toBe(restore);
    const names = (await get(h, 'management/credentials', controlHub)).json<{ Name: string }[]>().map((c) => c.Name);
    expect(names).toEqual(['StandardAccess', 'ControlHub', 'Restricted', 'C0', 'C1']);
  });
});

describe('what is acknowledged is what a restart gives back', () => {
  it('every acknowledged management write reads back identically after a real stop and start', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir, config: constellationFile });
    const writes: [string, unknown][] = [
      ['management/credentials', { Name: 'Spaced Name', AccessKey: 'key with inner spaces 1', EnableControlHub: true }],
      ['management/sentinels', { Name: 'Ünïcode 😀', Credential: 'StandardAccess' }],
      [
        'management/sentinels/MyServer/packages',
        { Name: 'Lamp', PackageFile: 'lamp & co.zip', Credential: 'Restricted' },
      ],
      [
        'management/sentinels/MyServer/packages/Lamp/settings',
        {
          'a<b': 'line1\nline2\r\n\ttabbed "quoted" & <x>',
          Obj: { nested: ['x', 1] },
          n: 2,
          '  inner key': 'refused?',
        },
      ],
      [
        'management/sentinels/MyServer/packages/Lamp/settings',
        { 'a<b': 'line1\nline2\r\n\ttabbed "quoted" & <x>', Obj: { nested: ['x', 1] }, n: 2, Emoji: '😀' },
      ],
      ['management/sentinels/MyServer/packages/Lamp/groups', ['G1', 'G2']],
      [
        'management/credentials/Restricted/authorizations',
        {
          Messages: {
            DefaultAuthorization: 'Deny',
            Authorizations: [{ Id: 'Lamp rule', Scope: 'Package', Args: 'Lamp', MessageKey: 'On*' }],
          },
        },
      ],
      [
        'management/sentinels/MyServer/packages/Lamp/recoveryoptions',
        { RestartAfterFailure: false, NumberOfRetry: 1, ResetCounterAfterMinutes: 2, RestartPackageAfterSeconds: 3 },
      ],
    ];
    const acknowledged: [string, unknown][] = [];
    for (const [action, body] of writes) {
      const reply = await post(first, action, controlHub, body);
      if (reply.status === 200) acknowledged.push([action, reply.json()]);
      else {
        expect(reply.status, `${action} ${JSON.stringify(body)}: ${reply.text}`).toBe(400);
        expect(reply.text, action).toMatch(/white space/);
      }
    }
    // The key with white space at its ends was refused, not trimmed; all the others were acknowledged.
    expect(acknowledged).toHaveLength(writes.length - 1);
    const reads = async (h: TestHub) => ({
      credentials: (await get(h, 'management/credentials', controlHub, { includeAccessKeys: 'true' })).json(),
      sentinels: (await get(h, 'management/sentinels', controlHub)).json(),
      lamp: (await get(h, 'management/sentinels/MyServer/packages/Lamp', controlHub)).json(),
      settings: (await get(h, 'management/sentinels/MyServer/packages/Lamp/settings', controlHub)).json(),
      rules: (await get(h, 'management/credentials/Restricted/authorizations', controlHub)).json(),
      recovery: (await get(h, 'management/sentinels/MyServer/packages/Lamp/recoveryoptions', controlHub)).json(),
    });
    const beforeRestart = await reads(first);
    expect(beforeRestart.settings).toEqual({
      'a<b': 'line1\nline2\r\n\ttabbed "quoted" & <x>',
      Obj: '{"nested":["x",1]}',
      n: '2',
      Emoji: '😀',
    });
    await first.stop();
    const second = await hub({ dataDir });
    expect(await reads(second)).toEqual(beforeRestart);
    for (const [action, answer] of acknowledged.slice(-3)) {
      expect((await get(second, action, controlHub)).json()).toEqual(answer);
    }
    // The package sees its settings, its key works.
    expect((await get(second, 'platform/GetSettings', pkg('MyServer', 'Lamp', 'restricted-key-0001'))).status).toBe(
      200,
    );
  });

  it('a write whose history commit fails (database locked by another process) answers an error and changes nothing', async () => {
    const h = await hub({ config: constellationFile, options: { lockWaitMs: 200 } });
    const before = configFileText(h);
    const locker = new Database(path.join(h.dataDir, 'hub.db'));
    locker.pragma('busy_timeout = 0');
    locker.exec('BEGIN IMMEDIATE');
    try {
      const reply = await post(h, 'management/credentials', controlHub, {
        Name: 'Newbie',
        AccessKey: 'newbie-key-0001',
      });
      expect(reply.status).toBeGreaterThanOrEqual(500);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(configFileText(h)).toBe(before);
    expect(fs.readdirSync(path.dirname(h.options.configPath)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(
      (await get(h, 'management/credentials', controlHub)).json<{ Name: string }[]>().map((c) => c.Name),
    ).not.toContain('Newbie');
    expect(
      (
        await get(h, 'consumer/CheckAccess', {
          SentinelName: 'Consumer',
          PackageName: 'X',
          AccessKey: 'newbie-key-0001',
        })
      ).status,
    ).toBe(403);
    // The next write works and starts from the same version.
    expect(
      (await post(h, 'management/credentials', controlHub, { Name: 'Newbie', AccessKey: 'newbie-key-0001' })).status,
    ).toBe(200);
    expect(lineDiff(before, configFileText(h)).added).toHaveLength(1);
  });
});
