/** The hub's version: package.json's, the one place it is written. */
import fs from 'node:fs';

/** package.json is one folder up from src/ (tsx) and two from dist/src/ (the build). */
function packageVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    let text: string;
    try {
      text = fs.readFileSync(new URL(candidate, import.meta.url), 'utf8');
    } catch {
      continue;
    }
    const manifest = JSON.parse(text) as { name?: string; version?: string };
    if (manifest.name === 'hub' && manifest.version) return manifest.version;
  }
  throw new Error(`the hub's package.json was not found above ${import.meta.url}`);
}

export const HUB_VERSION = packageVersion();
