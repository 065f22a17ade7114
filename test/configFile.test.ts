import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../src/config/validate.js';
import { parseConfigurationFile, serializeConfiguration } from '../src/config/xmlFile.js';
import { testConfiguration } from './support/testHub.js';

const minimal = (body: string) =>
  `<?xml version="1.0"?><hub><credentials><credential name="A" accessKey="k1" enableManagementAPI="true"/></credentials>${body}</hub>`;
const configOf = (text: string) => parseConfigurationFile(text).config;

describe('configuration file', () => {
  it('round-trips: parse(serialize(model)) gives the same model', () => {
    const model = testConfiguration();
    model.settingsGroups = [{ name: 'Common', settings: [{ key: 'Unit', kind: 'value', value: 'C & "F" <x>' }] }];
    model.sentinels[0].packages[0].settings = [
      { key: 'Json', kind: 'content', value: '{"a":"x < y & z"}' },
      { key: 'Xml', kind: 'content', value: '<root a="1"><b>t &amp; u</b></root>' },
      { key: 'Plain', kind: 'value', value: '42' },
    ];
    model.sentinels[0].packages[0].imports = ['Common'];
    model.sentinels[0].packages[0].recoveryOptions = {
      restartAfterFailure: false,
      numberOfRetry: 1,
      resetCounterAfterMinutes: 2,
      restartPackageAfterSeconds: 3,
    };
    model.credentials[1].authorizations.stateObjects = {
      defaultAuthorization: 'Deny',
      rules: [{ id: '1', authorization: 'Allow', sentinelName: 'S1', packageName: '*', name: 'Temp*' }],
    };
    const once = configOf(serializeConfiguration(model));
    expect(once).toEqual(model);
    expect(configOf(serializeConfiguration(once))).toEqual(once);
  });

  it('reads files whose root is <constellation> or <configuration><constellation>', () => {
    const inner =
      '<credentials><credential name="A" accessKey="k1"/></credentials><sentinels><sentinel name="S" credential="A"><packages><package name="P"/></packages></sentinel></sentinels>';
    for (const text of [
      `<constellation>${inner}</constellation>`,
      `<configuration><constellation>${inner}</constellation></configuration>`,
    ]) {
      const config = configOf(text);
      expect(config.sentinels[0].packages[0]).toMatchObject({ name: 'P', enable: true, autoStart: true });
    }
  });

  it('reads settings from value, content and settings-group imports', () => {
    const config = configOf(
      minimal(`<sentinels><sentinel name="S" credential="A"><packages><package name="P"><settings>
        <setting key="v" value="1"/><setting key="j"><content>{ "a": 1 }</content></setting>
        <import><settingGroup groupName="G"/></import></settings></package></packages></sentinel></sentinels>
        <settingsGroups><group name="G"><settings><setting key="g" value="2"/></settings></group></settingsGroups>`),
    );
    expect(config.sentinels[0].packages[0].settings).toEqual([
      { key: 'v', kind: 'value', value: '1' },
      { key: 'j', kind: 'content', value: '{ "a": 1 }' },
    ]);
    expect(config.sentinels[0].packages[0].imports).toEqual(['G']);
  });

  const refusals: [string, string, RegExp][] = [
    ['not well-formed XML', '<hub><credentials></hub>', /not well-formed XML at line 1/],
    [
      'a bad boolean',
      minimal('').replace('enableManagementAPI="true"', 'enableManagementAPI="yes"'),
      /<credentials>\/<credential>\[1\] attribute "enableManagementAPI": expected "true" or "false", got "yes"/,
    ],
    [
      'a missing attribute',
      minimal('<sentinels><sentinel name="S"/></sentinels>'),
      /<sentinels>\/<sentinel>\[1\] attribute "credential"/,
    ],
    [
      'a sentinel naming an unknown credential',
      minimal('<sentinels><sentinel name="S" credential="Nope"/></sentinels>'),
      /<sentinel name="S"> attribute "credential": unknown credential "Nope"/,
    ],
    [
      'duplicate sentinel names',
      minimal('<sentinels><sentinel name="S" credential="A"/><sentinel name="S" credential="A"/></sentinels>'),
      /"S" is declared twice/,
    ],
    [
      'duplicate package names',
      minimal(
        '<sentinels><sentinel name="S" credential="A"><packages><package name="P"/><package name="P"/></packages></sentinel></sentinels>',
      ),
      /<package> attribute "name": "P" is declared twice/,
    ],
    [
      'an unknown settings group import',
      minimal(
        '<sentinels><sentinel name="S" credential="A"><packages><package name="P"><settings><import><settingGroup groupName="X"/></import></settings></package></packages></sentinel></sentinels>',
      ),
      /unknown settings group "X"/,
    ],
    [
      'a reserved sentinel name',
      minimal('<sentinels><sentinel name="Consumer" credential="A"/></sentinels>'),
      /reserved/,
    ],
    [
      'a shared access key',
      '<hub><credentials><credential name="A" accessKey="k"/><credential name="B" accessKey="k"/></credentials></hub>',
      /share one access key/,
    ],
    ['a wrong root', '<other/>', /root element/],
  ];
  it.each(refusals)('refuses %s, naming where', (_what, text, message) => {
    expect(() => parseConfigurationFile(text)).toThrow(ConfigurationError);
    expect(() => parseConfigurationFile(text)).toThrow(message);
  });
});
