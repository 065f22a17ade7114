/** The license: a built-in Community license with no limits until one is posted. */
import { z } from 'zod';

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
