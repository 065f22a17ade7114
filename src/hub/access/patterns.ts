/**
 * Filters of the interfaces use `*` as "any run of characters" (`name=Temperature*`); nothing else is
 * special. The hub matches them in memory — authorization rules, and the notifier deciding which waiting
 * polls a change concerns — with the linear matcher of src/wildcard.ts (the one definition the SQLite
 * store's exact test shares). The store is handed these patterns as they are (hub/ports/stateObjects.ts,
 * StateObjectPatterns); how an engine evaluates them is its own business (SQLite: store/sqlite/glob.ts).
 */
export { matchesPattern } from '../../wildcard.js';
