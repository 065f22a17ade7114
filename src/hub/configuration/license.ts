/** The license: a built-in Community license with no limits until one is posted. */
import { z } from 'zod';
import { hubError } from '../../errors.js';
import type { HubSettingStore } from '../ports/hubSettings.js';

export const licenseSchema = z.object({
  Licensee: z.string().min(1, 'must not be empty'),
  Edition: z.string().min(1, 'must not be empty'),
  ExpirationDate: z.iso.datetime({ offset: true }).nullish().or(z.iso.date().nullish()),
  MaxSentinels: z.number().int().min(0).nullish(),
  MaxPackageInstances: z.number().int().min(0).nullish(),
});

export type License = z.infer<typeof licenseSchema>;

export const communityLicense: License = {
  Licensee: 'Community',
  Edition: 'Community',
  ExpirationDate: null,
  MaxSentinels: null,
  MaxPackageInstances: null,
};

export const licenseRecord = (license: License, now: number) => ({
  Licensee: license.Licensee,
  Edition: license.Edition,
  ExpirationDate: license.ExpirationDate ?? null,
  MaxSentinels: license.MaxSentinels ?? null,
  MaxPackageInstances: license.MaxPackageInstances ?? null,
  IsExpired: license.ExpirationDate ? Date.parse(license.ExpirationDate) <= now : false,
});

/** The license in force (the one posted, else the Community one) and the limits it sets. */
export class HubLicense {
  constructor(private readonly hubSettings: HubSettingStore) {}

  async current(): Promise<License> {
    const text = await this.hubSettings.license();
    return text ? (JSON.parse(text) as License) : communityLicense;
  }

  async record() {
    return licenseRecord(await this.current(), Date.now());
  }

  async set(license: License) {
    await this.hubSettings.setLicense(JSON.stringify(license));
    return licenseRecord(license, Date.now());
  }

  /** Throws LicenseLimit (409) when the configuration would have `wouldHave` of `kind`, more than allowed. */
  async checkLimit(kind: 'sentinels' | 'instances', wouldHave: number): Promise<void> {
    const license = await this.current();
    const max = kind === 'sentinels' ? license.MaxSentinels : license.MaxPackageInstances;
    if (max !== null && max !== undefined && wouldHave > max) {
      const limit = kind === 'sentinels' ? 'MaxSentinels' : 'MaxPackageInstances';
      throw hubError('LicenseLimit', {
        max,
        what: kind === 'sentinels' ? 'sentinels' : 'package instances',
        setting: limit,
      });
    }
  }
}
