/**
 * A MessageCallback's form model: which input each parameter gets (from its declared type), how the
 * entered text becomes the message's Data, and the same call written as curl and as raw HTTP.
 */
import type { DescriptorEntry, PackageDescriptor, TypeDescription } from './types';

export type InputKind = 'number' | 'integer' | 'boolean' | 'string' | 'enum' | 'json';

const INTEGER = /^(System\.)?(U?Int(16|32|64)|S?Byte|int|long|short|byte|uint|ulong|ushort|sbyte)$/i;
const DECIMAL = /^(System\.)?(Double|Single|Decimal|float|double|decimal)$/i;
const BOOLEAN = /^(System\.)?(Boolean|bool)$/i;
const STRING = /^(System\.)?(String|string|Char|char|Guid|DateTime)$/i;

export function enumOf(descriptor: PackageDescriptor, typeName: string): TypeDescription | undefined {
  return (descriptor.MessageCallbackTypes ?? []).find(
    (t) => t.IsEnum && (t.TypeFullname === typeName || t.TypeName === typeName),
  );
}

export function inputKind(descriptor: PackageDescriptor, entry: DescriptorEntry): InputKind {
  if (INTEGER.test(entry.TypeName)) return 'integer';
  if (DECIMAL.test(entry.TypeName)) return 'number';
  if (BOOLEAN.test(entry.TypeName)) return 'boolean';
  if (STRING.test(entry.TypeName)) return 'string';
  if (enumOf(descriptor, entry.TypeName)) return 'enum';
  return 'json';
}

/** The text a parameter's input starts with: its declared default, else empty. */
export function initialText(kind: InputKind, entry: DescriptorEntry): string {
  const value = entry.DefaultValue;
  if (value === undefined || value === null) return kind === 'boolean' ? 'false' : '';
  if (kind === 'json') return JSON.stringify(value, null, 2);
  return String(value);
}

/** The parameter's value, or a problem to show beside its input. */
export function parameterValue(
  kind: InputKind,
  text: string,
  entry: DescriptorEntry,
): { value?: unknown; problem?: string; omitted?: boolean } {
  if (text.trim() === '' && kind !== 'string') {
    if (entry.IsOptional) return { omitted: true, value: entry.DefaultValue ?? null };
    return { problem: 'is required' };
  }
  switch (kind) {
    case 'integer':
      return /^-?\d+$/.test(text.trim()) ? { value: Number(text) } : { problem: 'must be a whole number' };
    case 'number':
      return Number.isFinite(Number(text)) ? { value: Number(text) } : { problem: 'must be a number' };
    case 'boolean':
      return { value: text === 'true' };
    case 'string':
    case 'enum':
      return { value: text };
    case 'json':
      try {
        return { value: JSON.parse(text) };
      } catch (error) {
        return { problem: `is not valid JSON (${(error as Error).message})` };
      }
  }
}

/** One parameter: the value itself; several: an array in declaration order; none: null. */
export const dataOf = (values: unknown[]) => (values.length === 0 ? null : values.length === 1 ? values[0] : values);

export interface ScopeChoice {
  kind: 'Package' | 'Instance' | 'Group' | 'Sentinel' | 'All';
  arg: string;
}

export function scopeOf(choice: ScopeChoice): { Scope: string; Args: string[] } {
  if (choice.kind === 'All') return { Scope: 'All', Args: [] };
  if (choice.kind === 'Instance') return { Scope: 'Package', Args: [choice.arg] };
  return {
    Scope: choice.kind,
    Args: choice.arg
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean),
  };
}

export function sendMessageBody(choice: ScopeChoice, key: string, data: unknown, sagaId?: string) {
  return { Scope: { ...scopeOf(choice), ...(sagaId ? { SagaId: sagaId } : {}) }, Key: key, Data: data };
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** `base` is the hub's address with its path prefix, if any (`http://hub:8088/constellation/`). */
export function curlOf(base: string, body: unknown, packageName: string): string {
  return [
    `curl -X POST ${shellQuote(new URL('rest/consumer/SendMessage', base.endsWith('/') ? base : `${base}/`).href)} \\`,
    `  -H 'SentinelName: Consumer' -H ${shellQuote(`PackageName: ${packageName}`)} -H "AccessKey: $HUB_ACCESS_KEY" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join('\n');
}

/** `prefix` is the hub's path prefix with both slashes (`/constellation/`), `/` when it has none. */
export function rawHttpOf(host: string, body: unknown, packageName: string, prefix = '/'): string {
  const text = JSON.stringify(body);
  return [
    `POST ${prefix}rest/consumer/SendMessage HTTP/1.1`,
    `Host: ${host}`,
    'SentinelName: Consumer',
    `PackageName: ${packageName}`,
    'AccessKey: <your access key>',
    'Content-Type: application/json',
    `Content-Length: ${new TextEncoder().encode(text).length}`,
    '',
    text,
  ].join('\n');
}
