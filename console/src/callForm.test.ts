/** The MessageCallback form model: inputs from declared types, values from text, the call as curl and HTTP. */
import { describe, expect, it } from 'vitest';
import { curlOf, dataOf, initialText, inputKind, parameterValue, rawHttpOf, sendMessageBody } from './callForm';
import { formatNumber, wildcard } from './format';
import type { DescriptorEntry, PackageDescriptor } from './types';

const descriptor: PackageDescriptor = {
  PackageName: 'Light',
  MessageCallbackTypes: [
    {
      TypeName: 'Color',
      TypeFullname: 'Demo.Color',
      IsEnum: true,
      EnumValues: [{ Name: 'Warm', TypeName: 'Int32', Type: 0 }],
    },
  ],
};
const entry = (TypeName: string, extra: Partial<DescriptorEntry> = {}): DescriptorEntry => ({
  Name: 'p',
  TypeName,
  Type: 2,
  ...extra,
});

describe('MessageCallback forms', () => {
  it('picks an input from the declared type', () => {
    expect(
      ['System.Int32', 'System.Double', 'System.Boolean', 'System.String', 'Demo.Color', 'Demo.Point'].map((t) =>
        inputKind(descriptor, entry(t)),
      ),
    ).toEqual(['integer', 'number', 'boolean', 'string', 'enum', 'json']);
  });

  it('turns text into values, saying what is wrong, and uses defaults for empty optional parameters', () => {
    expect(parameterValue('integer', '42', entry('System.Int32'))).toEqual({ value: 42 });
    expect(parameterValue('integer', '4.2', entry('System.Int32')).problem).toBe('must be a whole number');
    expect(parameterValue('number', '', entry('System.Double'))).toEqual({ problem: 'is required' });
    expect(parameterValue('number', '', entry('System.Double', { IsOptional: true, DefaultValue: 1.5 }))).toEqual({
      omitted: true,
      value: 1.5,
    });
    expect(parameterValue('json', '{"x": 1}', entry('Demo.Point'))).toEqual({ value: { x: 1 } });
    expect(parameterValue('json', '{x', entry('Demo.Point')).problem).toMatch(/^is not valid JSON/);
    expect(initialText('json', entry('Demo.Point', { DefaultValue: { x: 0 } }))).toBe('{\n  "x": 0\n}');
  });

  it('sends one parameter as the value, several as an array, none as null', () => {
    expect([dataOf([]), dataOf([1]), dataOf([1, true])]).toEqual([null, 1, [1, true]]);
  });

  it('writes the same call as curl and as raw HTTP, with the saga id', () => {
    const body = sendMessageBody({ kind: 'Instance', arg: 'S1/Light' }, 'Set', 3, 'saga-1');
    expect(body).toEqual({ Scope: { Scope: 'Package', Args: ['S1/Light'], SagaId: 'saga-1' }, Key: 'Set', Data: 3 });
    expect(curlOf('http://hub:8088', body, 'Console')).toContain(
      `-d '{"Scope":{"Scope":"Package","Args":["S1/Light"],"SagaId":"saga-1"},"Key":"Set","Data":3}'`,
    );
    const http = rawHttpOf('hub:8088', body, 'Console').split('\n');
    expect(http[0]).toBe('POST /rest/consumer/SendMessage HTTP/1.1');
    expect(http).toContain(`Content-Length: ${JSON.stringify(body).length}`);
    expect(curlOf('http://hub', { Key: "it's" }, 'Console')).toContain(`'{"Key":"it'\\''s"}'`);
    // Under a listen prefix both name the prefixed path.
    expect(curlOf('http://hub:8088/constellation/', body, 'Console')).toContain(
      `curl -X POST 'http://hub:8088/constellation/rest/consumer/SendMessage'`,
    );
    expect(rawHttpOf('hub:8088', body, 'Console', '/constellation/').split('\n')[0]).toBe(
      'POST /constellation/rest/consumer/SendMessage HTTP/1.1',
    );
  });
});

describe('values and filters', () => {
  it('writes numbers in full, grouped, never with an exponent', () => {
    expect([formatNumber(482_000), formatNumber(1_234_567.25), formatNumber(0.000001), formatNumber(-12)]).toEqual([
      '482,000',
      '1,234,567.25',
      '0.000001',
      '-12',
    ]);
  });

  it('matches * wildcards like the hub, case-insensitively', () => {
    expect(['Temperature', 'temp', 'Humidity'].filter(wildcard('Temp*'))).toEqual(['Temperature', 'temp']);
    expect(['a.b', 'axb'].filter(wildcard('a.b'))).toEqual(['a.b']);
  });
});
