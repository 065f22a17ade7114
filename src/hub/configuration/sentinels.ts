/** Management of the configuration's sentinels; each change goes through Configuration.update. */
import type { HubConfiguration, Sentinel } from '../../config/model.js';
import { hubError } from '../../errors.js';
import type { ChangeOrigin, Configuration } from './configuration.js';
import type { HubLicense } from './license.js';

/** A change the hub makes without a request (tests, tools). */
const hubOrigin: ChangeOrigin = { by: '(hub)', reason: 'change' };

/** A sentinel of one given configuration: a draft being changed, or the result a change returned. */
export const sentinelIn = (config: HubConfiguration, name: string) => config.sentinels.find((s) => s.name === name);

export const sentinelRecord = (s: Sentinel) => ({
  Name: s.name,
  Credential: s.credential,
  Packages: s.packages.map((p) => p.name),
});

export class Sentinels {
  constructor(
    private readonly configuration: Configuration,
    private readonly license: HubLicense,
  ) {}

  /** The sentinel, or NotFound (404). */
  require(name: string): Sentinel {
    const sentinel = this.configuration.sentinel(name);
    if (!sentinel) throw hubError('SentinelNotFound', { sentinel: name });
    return sentinel;
  }

  list() {
    return this.configuration.current.sentinels.map(sentinelRecord);
  }

  async upsert(name: string, credential: string, origin: ChangeOrigin = hubOrigin) {
    if (!this.configuration.sentinel(name))
      await this.license.checkLimit('sentinels', this.configuration.current.sentinels.length + 1);
    const next = await this.configuration.update((draft) => {
      const existing = sentinelIn(draft, name);
      if (existing) existing.credential = credential;
      else draft.sentinels.push({ name, credential, packages: [] });
    }, origin);
    return sentinelRecord(sentinelIn(next, name) as Sentinel);
  }

  async delete(name: string, origin: ChangeOrigin): Promise<void> {
    this.require(name);
    await this.configuration.update((draft) => {
      draft.sentinels = draft.sentinels.filter((s) => s.name !== name);
    }, origin);
  }
}
