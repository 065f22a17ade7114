/**
 * Test support for the console: Debian's Chromium driven by playwright-core, and a console build that
 * is up to date with its sources (built here when stale, as `npm start` would).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
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

export const WIDE = { width: 1280, height: 860 };
export const NARROW = { width: 390, height: 844 };

/** Saves `name`.png of the page (and `name`-narrow.png at a phone's width) when screenshots are asked for. */
export async function screenshot(
  page: Page,
  name: string,
  options: { narrow?: boolean; fullPage?: boolean } = {},
): Promise<void> {
  if (!screenshotDirectory) return;
  fs.mkdirSync(screenshotDirectory, { recursive: true });
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: path.join(screenshotDirectory, `${name}.png`), fullPage: options.fullPage ?? false });
  if (options.narrow) {
    await page.setViewportSize(NARROW);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(screenshotDirectory, `${name}-narrow.png`), fullPage: false });
    await page.setViewportSize(WIDE);
  }
}
