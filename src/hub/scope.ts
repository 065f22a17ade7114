/** Message scopes: names and numbers on the wire (who a scope reaches: hub/messageAddresses.ts). */
import { hubError } from '../errors.js';

/** Numbers on the wire (wire.md). */
export const ScopeType = { None: 0, Group: 1, Package: 2, Sentinel: 3, Others: 4, All: 5 } as const;
export type ScopeName = Exclude<keyof typeof ScopeType, 'None'>;

// A Map, not an object literal: `scope=constructor` must miss, not find Object.prototype's member.
const byLowerName = new Map<string, ScopeName>([
  ['all', 'All'],
  ['other', 'Others'],
  ['others', 'Others'],
  ['group', 'Group'],
  ['sentinel', 'Sentinel'],
  ['package', 'Package'],
]);

/** Accepts a name (any case, `Other` or `Others`) or a wire number. */
export function parseScope(raw: unknown): ScopeName {
  const text = String(raw ?? '').trim();
  if (text === '') throw hubError('MissingScope');
  if (/^\d+$/.test(text)) {
    const entry = Object.entries(ScopeType).find(([, n]) => n === Number(text));
    if (entry && entry[0] !== 'None') return entry[0] as ScopeName;
  } else {
    const name = byLowerName.get(text.toLowerCase());
    if (name) return name;
  }
  throw hubError('InvalidScope', { scope: text });
}

/** Group, Sentinel and Package name their targets: without args they would reach nobody. */
export function checkScopeArgs(scope: ScopeName, args: string[]): void {
  const needsArgs = scope === 'Group' || scope === 'Sentinel' || scope === 'Package';
  if (needsArgs && args.length === 0) {
    throw hubError('MissingScopeArgs', { scope });
  }
}
