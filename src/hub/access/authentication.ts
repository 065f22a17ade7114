/** Turns the three authentication values into a Caller, or nothing: the HTTP layer answers 403. */
import { timingSafeEqual } from 'node:crypto';
import type { Credential } from '../../config/model.js';
import type { Caller, InterfaceName } from './caller.js';
import type { Configuration } from '../configuration/configuration.js';

/** The three values a request authenticates with (query parameters or headers). */
export interface AuthenticationValues {
  sentinelName?: string;
  packageName?: string;
  accessKey?: string;
}

// Credential objects are replaced whole when the configuration changes, so their bytes can be kept per object.
const keyBytes = new WeakMap<Credential, Buffer>();

/** Compares a given key with a credential's in constant time (for keys of the same length). */
function isKeyOf(credential: Credential, given: string): boolean {
  let expected = keyBytes.get(credential);
  if (!expected) keyBytes.set(credential, (expected = Buffer.from(credential.accessKey)));
  const bytes = Buffer.from(given);
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

export function authenticate(
  configuration: Configuration,
  interfaceName: InterfaceName,
  { sentinelName, packageName, accessKey }: AuthenticationValues,
): Caller | undefined {
  if (!sentinelName || !packageName || !accessKey) return undefined;

  if (interfaceName === 'platform') {
    const ref = configuration.instance(sentinelName, packageName);
    if (!ref || !ref.instance.enable) return undefined;
    const credential = configuration.instanceCredential(ref);
    if (!credential?.enable || !isKeyOf(credential, accessKey)) return undefined;
    return { interfaceName, sentinelName, packageName, friendlyName: `${sentinelName}/${packageName}`, credential };
  }

  const expectedSentinel = interfaceName === 'consumer' ? 'Consumer' : 'Management';
  if (sentinelName !== expectedSentinel) return undefined;
  const credential = configuration.credentialByKey(accessKey);
  if (!credential?.enable) return undefined;
  if (interfaceName === 'management' && !credential.enableManagementAPI) return undefined;
  return { interfaceName, sentinelName, packageName, friendlyName: `${sentinelName}/${packageName}`, credential };
}
