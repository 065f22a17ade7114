/**
 * One set of rules for names, keys and values everywhere: what would not survive the file (or the next
 * start) is refused with 400 naming the field, by the API and by POST configuration alike, and the
 * refusal changes nothing. Hostile XML is refused the same way.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../src/config/validate.js';
import { parseConfigurationFile } from '../src/config/xmlFile.js';
import { constellationFile, controlHub } from './support/constellation.js';
import { storedStateOf } from './support/storedState.js';
import type { TestHub } from './support/testHub.js';
import { get, hubsStoppedAfterEach, post, startTestHub, tempDir, configFileText } from './support/testHub.js';

const hub = hubsStoppedAfterEach();

/** Runs `act` and checks that neither the file nor anything stored changed. */
async function changesNothing(h: TestHub, act: () => Promise<void>): Promise<void> {
  const state = storedStateOf(h.dataDir);
  try {
    const file = configFileText(h);
    const digest = state.digest();
    const config = JSON.stringify(h.services.configuration.current);
    await act();
    expect(configFileText(h)).toBe(file);
    expect(state.digest()).toBe(digest);
    expect(JSON.stringify(h.services.configuration.current)).toBe(config);
  } finally {
    state.close();
  }
}

describe('the same rules for the API and the file', () => {
  const refusals: [string, string, unknown, RegExp][] = [
    [
      'a setting key with white space at an end ("k " beside "k")',
      'management/sentinels/MyServer/packages/Paradox/settings',
      { k: '1', 'k ': '2' },
      /the setting key "k " must not start or end with white space/,
    ],
    [
      'a sentinel name with a lone high surrogate',
      'management/sentinels',
      { Name: 'X\ud800', Credential: 'StandardAccess' },
      /Name.*lone surrogate/,
    ],
    [
      'a sentinel name with a lone low surrogate',
      'management/sentinels',
      { Name: 'X\udbff', Credential: 'StandardAccess' },
      /Name.*lone surrogate/,
    ],
    [
      'an access key with white space at its ends',
      'management/credentials',
      { Name: 'Spacey', AccessKey: '  spacekey1  ' },
      /AccessKey.*white space/,
    ],
    [
      'an access key with a NUL byte',
      'management/credentials',
      { Name: 'Nul', AccessKey: 'nul-key\u0000-0001' },
      /AccessKey.*U\+0000/,
    ],
    [
      'a setting value XML cannot carry',
      'management/sentinels/MyServer/packages/Paradox/settings',
      { Bell: 'ding\u0007' },
      /Bell.*U\+0007/,
    ],
    [
      'a rule pattern with a control character',
      'management/credentials/Restricted/authorizations',
      { Groups: { Authorizations: [{ Id: 'x', GroupName: 'a\u0001' }] } },
      /GroupName.*control characters|U\+0001/,
    ],
  ];
  it.each(refusals)('refuses %s with 400 naming the field, changing nothing', async (_what, action, body, message) => {
    const h = await hub({ config: constellationFile });
    await changesNothing(h, async () => {
      const reply = await post(h, action, controlHub, body);
      expect(reply.status).toBe(400);
      const { Message, MessageDetail } = reply.json<{ Message: string; MessageDetail?: string }>();
      expect(`${Message} ${MessageDetail ?? ''}`).toMatch(message);
    });
  });

  it('a file holding what the API refuses does not start, naming the element', () => {
    const withKey = (key: string) =>
      constellationFile.replace(
        '<setting key="PortName" value="COM4" />',
        `<setting key="k" value="1" /><setting key="${key}" value="2" />`,
      );
    expect(() => parseConfigurationFile(withKey('k '))).toThrow(
      /<setting> attribute "key" \("k "\) must not start or end with white space/,
    );
    expect(() =>
      parseConfigurationFile(
        constellationFile.replace('accessKey="standard-access-key-0001"', 'accessKey="  spacekey1  "'),
      ),
    ).toThrow(/accessKey.*white space/);
    expect(() => parseConfigurationFile(constellationFile.replace('value="COM4"', 'value="a&#1;b"'))).toThrow(
      ConfigurationError,
    );
  });
});

describe('POST configuration and reload check what a start would', () => {
  const postXml = (h: TestHub, text: string) =>
    post(h, 'management/configuration', controlHub, text, 'application/xml');

  it('refuses a listen URI that could not be served, and an https one without a certificate', async () => {
    const h = await hub({ config: constellationFile });
    await changesNothing(h, async () => {
      const garbage = await postXml(h, constellationFile.replace('http://+:8088/', 'garbage'));
      expect(garbage.status).toBe(400);
      expect(garbage.text).toMatch(/listenUri.*garbage/);
      const mixed = await postXml(
        h,
        constellationFile.replace(
          '<uri listenUri="http://+:8088/" />',
          '<uri listenUri="http://+:8088/" /><uri listenUri="https://+:8088/secure/" />',
        ),
      );
      expect(mixed.status).toBe(400);
      expect(mixed.text).toMatch(/share a port with different schemes/);
      const https = await postXml(h, constellationFile.replace('http://+:8088/', 'https://+:8443/'));
      expect(https.status).toBe(400);
      expect(https.text).toMatch(/HUB_TLS_CERT and HUB_TLS_KEY.*reverse proxy/);
    });
  });

  it('refuses a configuration leaving no enabled credential with the management right; so does reload', async () => {
    const h = await hub({ config: constellationFile });
    const locked = constellationFile.replace('enableManagementAPI="true"', 'enableManagementAPI="false"');
    await changesNothing(h, async () => {
      const reply = await postXml(h, locked);
      expect(reply.status).toBe(400);
      expect(reply.text).toMatch(/no enabled credential has the management right/);
    });
    fs.writeFileSync(h.options.configPath, locked);
    const reload = await get(h, 'management/configuration/reload', controlHub);
    expect(reload.status).toBe(400);
    expect(reload.text).toMatch(/no enabled credential has the management right/);
    expect((await get(h, 'management/CheckAccess', controlHub)).status).toBe(200);
  });

  it('a hand-edited file leaving nobody with the management right refuses to start, saying so', async () => {
    const dataDir = tempDir();
    const first = await startTestHub({ dataDir, config: constellationFile });
    await first.stop();
    fs.writeFileSync(first.options.configPath, constellationFile.replace('enableManagementAPI="true"', ''));
    await expect(startTestHub({ dataDir })).rejects.toThrow(
      /no enabled credential has the management right.*enableManagementAPI="true"/,
    );
  });

  const hostile: [string, string, RegExp][] = [
    [
      'entity declarations',
      `<?xml version="1.0"?><!DOCTYPE hub [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><hub><credentials><credential name="A" accessKey="&b;" enableManagementAPI="true"/></credentials></hub>`,
      /document type declarations/,
    ],
    [
      'an external entity',
      `<?xml version="1.0"?><!DOCTYPE hub [<!ENTITY x SYSTEM "file:///etc/passwd">]><hub><credentials><credential name="A" accessKey="&x;" enableManagementAPI="true"/></credentials></hub>`,
      /document type declarations/,
    ],
    ['20,000-deep nesting', `<hub>${'<a>'.repeat(20_000)}${'</a>'.repeat(20_000)}</hub>`, /nested more than 100 deep/],
    [
      'a character reference beyond Unicode',
      constellationFile.replace('value="COM4"', 'value="&#x110000;"'),
      /not well-formed XML at line \d+, column \d+: .*invalid character/i,
    ],
    [
      'an element named __proto__',
      constellationFile.replace('<fileServer', '<__proto__ polluted="yes" /><fileServer'),
      /may not be named <__proto__>/,
    ],
    [
      'an element named constructor',
      constellationFile.replace('<fileServer', '<constructor /><fileServer'),
      /may not be named <constructor>/,
    ],
  ];
  it.each(hostile)('refuses %s with 400 naming the problem, changing nothing', async (_what, text, message) => {
    const h = await hub({ config: constellationFile });
    await changesNothing(h, async () => {
      const reply = await postXml(h, text);
      expect(reply.status).toBe(400);
      expect(reply.json<{ MessageDetail: string }>().MessageDetail).toMatch(message);
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
