/**
 * Credential authorizations (wire.md): rules are tried in document order (their ids are text, as in
 * Constellation's files, and say nothing about order); the first rule that matches decides, and the
 * set's DefaultAuthorization decides when none does.
 */
import type { Authorization, Credential, RuleSet } from '../../config/model.js';
import { matchesPattern } from './patterns.js';

function decide<R extends { id: string; authorization: Authorization }>(
  set: RuleSet<R>,
  matches: (rule: R) => boolean,
): { allowed: boolean; rule?: R } {
  const rule = set.rules.find(matches);
  return { allowed: (rule?.authorization ?? set.defaultAuthorization) === 'Allow', rule };
}

export function maySeeStateObject(
  credential: Credential,
  object: { sentinelName: string; packageName: string; name: string },
): boolean {
  return decide(
    credential.authorizations.stateObjects,
    (r) =>
      matchesPattern(r.sentinelName, object.sentinelName) &&
      matchesPattern(r.packageName, object.packageName) &&
      matchesPattern(r.name, object.name),
  ).allowed;
}

/** Why a send is refused, or undefined when every argument of it is allowed. */
export function messageRefusal(
  credential: Credential,
  message: { scopeName: string; args: string[]; key: string },
): string | undefined {
  const args = message.args.length ? message.args : [''];
  for (const arg of args) {
    const { allowed, rule } = decide(
      credential.authorizations.messages,
      (r) =>
        matchesPattern(r.scope, message.scopeName) &&
        matchesPattern(r.args, arg) &&
        matchesPattern(r.messageKey, message.key),
    );
    if (!allowed) {
      return rule
        ? `message rule ${rule.id} of credential '${credential.name}' denies scope '${message.scopeName}'${arg ? ` to '${arg}'` : ''} with key '${message.key}'`
        : `credential '${credential.name}' denies messages by default and no rule allows scope '${message.scopeName}'${arg ? ` to '${arg}'` : ''} with key '${message.key}'`;
    }
  }
  return undefined;
}

export function groupRefusal(credential: Credential, group: string): string | undefined {
  const { allowed, rule } = decide(credential.authorizations.groups, (r) => matchesPattern(r.groupName, group));
  if (allowed) return undefined;
  return rule
    ? `group rule ${rule.id} of credential '${credential.name}' denies joining group '${group}'`
    : `credential '${credential.name}' denies groups by default and no rule allows group '${group}'`;
}
