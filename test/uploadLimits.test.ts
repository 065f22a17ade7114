/** Package uploads that must be refused without leaving anything behind: too many files, lying zip headers. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeUploadFolder } from '../src/hub/packages/repository.js';
import { createLogger } from '../src/logger.js';
import { admin, get, hubsStoppedAfterEach, tempDir } from './support/testHub.js';
import type { TestHub } from './support/testHub.js';
import { packageZip, uploadPackages } from './support/packages.js';
import { storedStateOf } from './support/storedState.js';
import { until } from './support/until.js';

const hub = hubsStoppedAfterEach();

/** Rewrites the declared uncompressed size of `entry` in both its local and central headers. */
function lieAboutSize(zip: Buffer, entry: string, declared: number): Buffer {
  const out = Buffer.from(zip);
  const name = Buffer.from(entry);
  for (let at = 0; at < out.length - 4; at++) {
    const signature = out.readUInt32LE(at);
    if (signature === 0x04034b50 && out.subarray(at + 30, at + 30 + name.length).equals(name))
      out.writeUInt32LE(declared, at + 22);
    if (signature === 0x02014b50 && out.subarray(at + 46, at + 46 + name.length).equals(name))
      out.writeUInt32LE(declared, at + 24);
  }
  return out;
}

const tmpFiles = (h: TestHub) => fs.readdirSync(path.join(h.dataDir, 'tmp'));

describe('upload limits', () => {
  it('11 files in one upload: 413, nothing stored, no temp file left in data/tmp', async () => {
    const h = await hub();
    const stored = storedStateOf(h.dataDir);
    const before = stored.digest();
    const files = Array.from({ length: 11 }, (_, i) => ({
      name: `p${i}.zip`,
      data: packageZip(
        { Name: `P${i}`, Version: '1' },
        { 'big.bin': new Uint8Array(64 * 1024).map((_, j) => (j * 7919) % 251) },
      ),
    }));
    const reply = await uploadPackages(h, files);
    expect(reply.status, reply.text).toBe(413);
    expect(reply.json<{ Message: string }>().Message).toMatch(/too large|too many|files/i);
    // Formidable may still be finishing the file it had started: then nothing may remain.
    await until(() => tmpFiles(h).length === 0);
    expect(stored.digest()).toBe(before);
    stored.close();
    expect((await get(h, 'management/packages', admin)).json()).toEqual([]);
  });

  // The refused 11th file is created while the request's folder is being removed: a removal that threw
  // (ENOTEMPTY) turned that 413 into a 500 once in CI, and from the timer that removes it again, it
  // would have ended the process. Here another process keeps writing files into the folder.
  it("an upload's temp folder is removed without throwing while files keep appearing in it", async () => {
    const dir = path.join(tempDir(), 'upload-race');
    const writer = spawn(process.execPath, [
      '-e',
      // It stops by itself after 30 s, should this test's process die before it kills it.
      `const fs = require('fs'); const end = Date.now() + 30000;
      for (let i = 0; Date.now() < end; i++) try { fs.writeFileSync(${JSON.stringify(dir)} + '/f' + (i % 50), 'x'); } catch {}`,
    ]);
    try {
      const logger = createLogger('silent');
      for (let i = 0; i < 40; i++) {
        fs.mkdirSync(dir);
        // The writer is at work in this folder (a writer that died never gets past this).
        await until(() => fs.readdirSync(dir).length > 0);
        await expect(removeUploadFolder(dir, logger)).resolves.toBeUndefined();
        // What a removal left (the writer won) goes with the next one, once nothing writes into it.
        if (fs.existsSync(dir)) {
          writer.kill('SIGSTOP');
          await removeUploadFolder(dir, logger);
          writer.kill('SIGCONT');
        }
        expect(fs.existsSync(dir)).toBe(false);
      }
    } finally {
      writer.kill('SIGKILL');
    }
  });

  it('an entry the manifest does not name, declaring 100 B and holding 100 MiB, is refused', async () => {
    const h = await hub();
    const stored = storedStateOf(h.dataDir);
    const before = stored.digest();
    const honest = packageZip({ Name: 'Liar', Version: '1' }, { 'payload.bin': new Uint8Array(100 * 1024 * 1024) });
    const reply = await uploadPackages(h, [{ name: 'liar.zip', data: lieAboutSize(honest, 'payload.bin', 100) }]);
    expect(reply.status, reply.text).toBe(400);
    expect(reply.json<{ Message: string }>().Message).toMatch(/payload.bin' does not hold what its header says/);
    expect(stored.digest()).toBe(before);
    stored.close();
    expect(tmpFiles(h)).toEqual([]);
    expect(fs.readdirSync(path.join(h.dataDir, 'repository'))).toEqual([]);
  }, 30_000);
});
