/**
 * Test support for the console: Debian's Chromium driven by playwright-core, and a console build that
 * is up to date with its sources (built here when stale, as `npm start` would).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.HUB_CHROMIUM ?? '/usr/bin/chromium';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function buildConsoleIfStale(): void {
  const result = spawnSync(process.execPath, [path.join(root, 'scripts/buildIfStale.mjs')], {
    cwd: root,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`building the console failed:\n${result.stdout}\n${result.stderr}`);
}

export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** Screenshots go to docs/console/ only when asked (CONSOLE_SCREENSHOTS=1): a test run changes no tracked file. */
export const screenshotDirectory =
  process.env.CONSOLE_SCREENSHOTS === '1' ? path.join(root, 'docs/console') : undefined;
