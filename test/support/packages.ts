/** Package archives for the repository, and their upload as the console sends it (multipart, as Admin). */
import { strToU8, zipSync } from 'fflate';
import type { Reply } from './testHub.js';
import { admin, replyOf } from './testHub.js';

/** A package archive: its manifest.json and the other files it holds. */
export const packageZip = (manifest: Record<string, unknown>, files: Record<string, Uint8Array> = {}): Buffer =>
  Buffer.from(zipSync({ 'manifest.json': strToU8(JSON.stringify(manifest)), ...files }));

/** One management/upload-package request with each file as a `package` part. */
export async function uploadPackages(h: { url: string }, files: { name: string; data: Buffer }[]): Promise<Reply> {
  const form = new FormData();
  for (const f of files) form.append('package', new Blob([new Uint8Array(f.data)]), f.name);
  const url = `${h.url}/rest/management/upload-package?SentinelName=Management&PackageName=Tests&AccessKey=${admin.AccessKey}`;
  return replyOf(await fetch(url, { method: 'POST', body: form }));
}
