/**
 * An existing Constellation server's file loads as it is: the .NET <configuration> wrapper, the
 * <constellationSection> root with its xmlns, text rule ids, restCounterAfterMinutes, appSettings.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfigurationFile } from '../src/config/xmlFile.js';
import { startHub } from '../src/createHub.js';
import { hubOptions } from '../src/settings.js';
import { constellationFile, controlHub } from './support/constellation.js';
import type { Identity } from './support/testHub.js';
import { get, hubsStoppedAfterEach, idOf, post, tempDir, writeConfiguration } from './support/testHub.js';

const restricted = (name = 'App'): Identity => ({
  SentinelName: 'Consumer',
  PackageName: name,
  AccessKey: 'restricted-key-0001',
});
const device = (name: string): Identity => ({
  SentinelName: 'MyServer',
  PackageName: name,
  AccessKey: 'standard-access-key-0001',
});

const hub = hubsStoppedAfterEach();

describe('a Constellation configuration file', () => {
  it('reads the documentation-shaped file: wrapper, text ids, restCounterAfterMinutes, appSettings', () => {
    const { config, appSettings, ignored } = parseConfigurationFile(constellationFile);
    expect(config.recoveryOptions.resetCounterAfterMinutes).toBe(99);
    expect(config.credentials.map((c) => c.name)).toEqual(['StandardAccess', 'ControlHub', 'Restricted']);
    expect(config.credentials[2].authorizations.stateObjects.rules.map((r) => r.id)).toEqual(['Paradox', 'ServerRAM']);
    expect(config.credentials[2].authorizations.groups.rules[0]).toMatchObject({ id: 'GroupA', groupName: 'GroupA' });
    expect(config.sentinels[0].packages[0].settings).toEqual([
      { key: 'PortName', kind: 'value', value: 'COM4' },
      { key: 'Zones', kind: 'content', value: '[ "Hall", "Kitchen" ]' },
    ]);
    expect(appSettings).toEqual({ delayAfterAuthenticationErrorMs: 300 });
    // Each part the hub does not use is named once; namespace declarations are not parts.
    expect(ignored).toEqual([
      '<configuration>/<configSections>',
      '<appSettings>/<add key="EnableTraceSource">',
      '<configuration>/<startup>',
      '<configuration>/<runtime>',
      '<constellationSection>/<fileServer>',
    ]);
  });

  it('starts a hub that enforces the text-id rules, honours DelayAfterAuthentificationError and reports what it ignores once', async () => {
    const dataDir = tempDir();
    const options = hubOptions({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
    writeConfiguration(options.configPath, constellationFile);
    const lines: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }),
    );
    const h = await startHub(options, logger);
    try {
      const warnings = lines
        .map((l) => JSON.parse(l) as { level: number; msg: string })
        .filter((l) => /not used by this hub/.test(l.msg));
      expect(warnings).toHaveLength(1);
      expect(warnings[0].level).toBe(40);
      for (const part of ['<configSections>', 'EnableTraceSource', '<startup>', '<runtime>', '<fileServer>'])
        expect(warnings[0].msg).toContain(part);

      for (const [pkg, name] of [
        ['Paradox', 'Zone1'],
        ['HWMonitor', '/ram/load'],
        ['HWMonitor', '/cpu/load'],
      ]) {
        expect((await get(h, 'platform/PushStateObject', device(pkg), { name, value: 1 })).status).toBe(204);
      }
      // Rule "Paradox" allows every object of the Paradox package, "ServerRAM" one object of HWMonitor, the default denies the rest.
      const seen = (await get(h, 'consumer/RequestStateObjects', restricted())).json<
        { PackageName: string; Name: string }[]
      >();
      expect(seen.map((o) => `${o.PackageName}/${o.Name}`).sort()).toEqual(['HWMonitor//ram/load', 'Paradox/Zone1']);
      expect(
        (await get(h, 'consumer/SendMessage', restricted(), { scope: 'Package', args: 'Paradox', key: 'Arm' })).status,
      ).toBe(204);
      const refused = await get(h, 'consumer/SendMessage', restricted(), {
        scope: 'Package',
        args: 'HWMonitor',
        key: 'Reset',
      });
      expect(refused.status).toBe(403);
      expect(idOf(await get(h, 'consumer/SubscribeToMessageGroup', restricted(), { group: 'GroupA' }))).toBeTruthy();
      expect((await get(h, 'consumer/SubscribeToMessageGroup', restricted('Other'), { group: 'GroupB' })).status).toBe(
        403,
      );
      // The management API answers text ids as they are written.
      const rules = (await get(h, 'management/credentials/Restricted/authorizations', controlHub)).json<{
        StateObjects: { Authorizations: { Id: string }[] };
      }>();
      expect(rules.StateObjects.Authorizations.map((r) => r.Id)).toEqual(['Paradox', 'ServerRAM']);

      // appSettings' DelayAfterAuthentificationError (300 ms) delays a refused key, though the options say 0.
      const started = Date.now();
      expect((await get(h, 'consumer/CheckAccess', { ...restricted(), AccessKey: 'wrong-key-000' })).status).toBe(403);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    } finally {
      await h.stop();
    }
  });

  it('tries rules in document order, whatever their ids say', async () => {
    const file = constellationFile.replace(
      '<authorization id="Paradox" authorization="Allow" sentinelName="*" packageName="Paradox" name="*" />',
      '<authorization id="9" authorization="Deny" sentinelName="*" packageName="Paradox" name="Secret*" />\n            <authorization id="1" authorization="Allow" sentinelName="*" packageName="Paradox" name="*" />',
    );
    const h = await hub({ config: file });
    await get(h, 'platform/PushStateObject', device('Paradox'), { name: 'SecretCode', value: 1 });
    await get(h, 'platform/PushStateObject', device('Paradox'), { name: 'Zone1', value: 1 });
    const seen = (await get(h, 'consumer/RequestStateObjects', restricted())).json<{ Name: string }[]>();
    expect(seen.map((o) => o.Name)).toEqual(['Zone1']);
  });

  it('accepts numeric rule ids, in files and in the API, and answers them as text', async () => {
    const h = await hub({ config: constellationFile });
    const set = await post(h, 'management/credentials/Restricted/authorizations', controlHub, {
      Groups: {
        DefaultAuthorization: 'Deny',
        Authorizations: [
          { Id: 7, GroupName: 'GroupA' },
          { Id: 'Named', GroupName: 'GroupC' },
        ],
      },
    });
    expect(set.status).toBe(200);
    expect(set.json<{ Groups: { Authorizations: { Id: string }[] } }>().Groups.Authorizations.map((r) => r.Id)).toEqual(
      ['7', 'Named'],
    );
  });

  it('reads <constellationSection> and <constellation> without the wrapper', () => {
    const inner = constellationFile.slice(
      constellationFile.indexOf('<constellationSection'),
      constellationFile.indexOf('</constellationSection>') + '</constellationSection>'.length,
    );
    expect(parseConfigurationFile(inner).config.credentials).toHaveLength(3);
    const old = inner
      .replace(/<constellationSection\b/, '<constellation')
      .replace('</constellationSection>', '</constellation>');
    expect(parseConfigurationFile(old).config.sentinels[0].name).toBe('MyServer');
  });
});
