/** Turns the three authentication values into a Caller, or nothing: the HTTP layer answers 403. */
import { timingSafeEqual } from 'node:crypto';
import type { Caller, InterfaceName } from './caller.js';
import type { Configuration } from './configuration.js';

export interface Credentials {
  sentinelName?: string;
  packageName?: string;
  accessKey?: string;
}

function sameKey(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function authenticate(
  configuration: Configuration,
  interfaceName: InterfaceName,
  { sentinelName, packageName, accessKey }: Credentials,
): Caller | undefined {
  if (!sentinelName || !packageName || !accessKey) return undefined;

  if (interfaceName === 'platform') {
    const ref = configuration.instance(sentinelName, packageName);
    if (!ref || !ref.instance.enable) return undefined;
    const credential = configuration.instanceCredential(ref);
    if (!credential?.enable || !sameKey(credential.accessKey, accessKey)) return undefined;
    return { interfaceName, sentinelName, packageName, friendlyName: `${sentinelName}/${packageName}`, credential };
  }

  const expectedSentinel = interfaceName === 'consumer' ? 'Consumer' : 'Management';
  if (sentinelName !== expectedSentinel) return undefined;
  const credential = configuration.credentialByKey(accessKey);
  if (!credential?.enable) return undefined;
  if (interfaceName === 'management' && !credential.enableManagementAPI) return undefined;
  return { interfaceName, sentinelName, packageName, friendlyName: `${sentinelName}/${packageName}`, credential };
}
