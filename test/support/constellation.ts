/** The documentation-shaped Constellation file (test/fixtures) and the identities it declares. */
import fs from 'node:fs';
import type { Identity } from './testHub.js';

export const constellationFile = fs.readFileSync(
  new URL('../fixtures/constellation.config.xml', import.meta.url),
  'utf8',
);
export const controlHub: Identity = {
  SentinelName: 'Management',
  PackageName: 'Tests',
  AccessKey: 'control-hub-key-0001',
};
