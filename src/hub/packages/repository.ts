/**
 * The package repository: uploads and downloads are streamed to this process's temp folder, validated
 * there (packageArchive.ts), then handed to the store with their metadata (the RepositoryStore keeps
 * the archive: a file beside hub.db on SQLite, rows on PostgreSQL). Start-up removes temp files and
 * whatever the store says a crash left behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { privateDirectory } from '../../privateFiles.js';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';
import type { Logger } from 'pino';
import { HubError, hubError } from '../../errors.js';
import type { RepositoryPackage, RepositoryStore } from '../ports/repository.js';
import type { ArchiveLimits, PackageManifest } from './packageArchive.js';
import { readPackageArchive } from './packageArchive.js';

export interface RepositoryLimits extends ArchiveLimits {
  maxPackageBytes: number;
  downloadTimeoutMs: number;
  maxRedirects: number;
}

export interface RepositoryEntry {
  Name: string;
  Version: string;
  Description: string;
  Author: string;
  FileName: string;
  Size: number;
  Sha256: string;
  UploadedAt: string;
  HasIcon: boolean;
  Settings: { Key: string; Type: string; Description: string; DefaultValue: unknown; HasXsd: boolean }[];
}

const entryOf = (stored: RepositoryPackage): RepositoryEntry => {
  const settings = JSON.parse(stored.settings) as PackageManifest['Settings'];
  const xsds = JSON.parse(stored.xsds) as Record<string, string>;
  return {
    Name: stored.name,
    Version: stored.version,
    Description: stored.description,
    Author: stored.author,
    FileName: stored.fileName,
    Size: stored.size,
    Sha256: stored.sha256,
    UploadedAt: new Date(stored.uploadedMs).toISOString(),
    HasIcon: stored.icon !== null,
    Settings: settings.map((s) => ({
      Key: s.Key,
      Type: s.Type,
      Description: s.Description,
      DefaultValue: s.DefaultValue ?? null,
      HasXsd: Object.hasOwn(xsds, s.Key),
    })),
  };
};

/** A stored archive to send: its bytes as a stream, read as the client takes them. */
export interface PackageDownload {
  fileName: string;
  size: number;
  sha256: string;
  stream: Readable;
}

/**
 * Removes an upload's temp folder and what it holds, and never throws: a file still being created in
 * it (formidable opens a refused upload's file just after refusing it) can make the last rmdir fail
 * with ENOTEMPTY, which is retried; what is left after that is logged, and goes at the next start.
 */
export function removeUploadFolder(dir: string, logger: Logger): Promise<void> {
  return fs.promises
    .rm(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 10 })
    .catch((error: unknown) =>
      logger.warn({ err: error, dir }, "could not remove an upload's temp folder; the next start does"),
    );
}

export class Repository {
  constructor(
    private readonly catalog: RepositoryStore,
    private readonly tempDir: string,
    private readonly limits: RepositoryLimits,
    private readonly logger: Logger,
  ) {}

  get uploadDir(): string {
    return this.tempDir;
  }

  /** Removes leftovers of a crash: temp files, and what the store says no package names. */
  async start(): Promise<void> {
    fs.rmSync(this.tempDir, { recursive: true, force: true });
    privateDirectory(this.tempDir);
    for (const file of await this.catalog.tidy())
      this.logger.warn({ file }, 'removed an archive no repository entry names');
  }

  /** What a package instance's PackageFile may name: each package's name and file name. */
  async packageFiles(): Promise<ReadonlySet<string>> {
    return new Set(await this.catalog.fileNames());
  }

  newTempPath(): string {
    return path.join(this.tempDir, `${Date.now()}-${randomBytes(6).toString('hex')}.part`);
  }

  /**
   * Validates the archives (all of them before storing any), then stores each; a new version of a
   * package replaces the previous one. The temp files are consumed.
   */
  async store(files: { tempPath: string; fileName: string }[]): Promise<RepositoryEntry[]> {
    try {
      const checked = [];
      for (const file of files) {
        const size = fs.statSync(file.tempPath).size;
        if (size > this.limits.maxPackageBytes)
          throw hubError('PackageTooLarge', { max: this.limits.maxPackageBytes, file: file.fileName });
        const contents = await readPackageArchive(file.tempPath, this.limits);
        checked.push({ ...file, size, contents, sha256: await sha256Of(file.tempPath) });
      }
      const names = checked.map((c) => c.contents.manifest.Name);
      const dup = names.find((n, i) => names.indexOf(n) !== i);
      if (dup) throw hubError('DuplicatePackage', { name: dup });
      const stored: RepositoryEntry[] = [];
      for (const c of checked) {
        const { manifest, icon, xsds } = c.contents;
        const entry: RepositoryPackage = {
          name: manifest.Name,
          version: manifest.Version,
          description: manifest.Description,
          author: manifest.Author,
          fileName: path.basename(c.fileName || `${manifest.Name}.zip`),
          size: c.size,
          sha256: c.sha256,
          uploadedMs: Date.now(),
          settings: JSON.stringify(manifest.Settings),
          icon: icon ?? null,
          xsds: JSON.stringify(xsds),
        };
        await this.catalog.replace(entry, c.tempPath);
        stored.push(entryOf(entry));
      }
      return stored;
    } finally {
      for (const file of files) fs.rmSync(file.tempPath, { force: true });
    }
  }

  /** Downloads an archive over http(s) (bounded size, time and redirects), then stores it. */
  async download(url: string): Promise<RepositoryEntry> {
    let current: URL;
    try {
      current = new URL(url);
    } catch {
      throw hubError('InvalidUrl', { url });
    }
    const signal = AbortSignal.timeout(this.limits.downloadTimeoutMs);
    const tempPath = this.newTempPath();
    try {
      for (let redirects = 0; ; redirects++) {
        if (current.protocol !== 'http:' && current.protocol !== 'https:') {
          throw hubError('UnsupportedUrlScheme', { scheme: current.protocol });
        }
        let response: Response;
        try {
          response = await fetch(current, { redirect: 'manual', signal });
        } catch (error) {
          const cause = (error as { cause?: { code?: string; message?: string } }).cause;
          const why = signal.aborted
            ? `no answer within ${this.limits.downloadTimeoutMs} ms`
            : (cause?.code ?? cause?.message ?? (error as Error).message);
          throw hubError('DownloadFailed', { url: current.href, reason: why });
        }
        const location = response.headers.get('location');
        if (response.status >= 300 && response.status < 400 && location) {
          if (redirects >= this.limits.maxRedirects)
            throw hubError('TooManyRedirects', { max: this.limits.maxRedirects, url });
          current = new URL(location, current);
          continue;
        }
        if (!response.ok || !response.body) {
          throw hubError('DownloadFailed', { url: current.href, reason: `the server answered ${response.status}` });
        }
        const declared = Number(response.headers.get('content-length') ?? 0);
        if (declared > this.limits.maxPackageBytes)
          throw hubError('PackageTooLarge', { max: this.limits.maxPackageBytes });
        await this.saveBody(response.body, tempPath, signal);
        break;
      }
      const [entry] = await this.store([{ tempPath, fileName: path.basename(current.pathname) || 'package.zip' }]);
      return entry;
    } finally {
      fs.rmSync(tempPath, { force: true });
    }
  }

  private async saveBody(body: ReadableStream<Uint8Array>, tempPath: string, signal: AbortSignal): Promise<void> {
    let size = 0;
    const max = this.limits.maxPackageBytes;
    const limit = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > max) done(hubError('PackageTooLarge', { max }));
        else done(null, chunk);
      },
    });
    const file = fs.createWriteStream(tempPath);
    // A failed pipeline settles before the file stream has opened and closed its file: without waiting
    // for 'close', the caller's removal of the temp file could run first and the file appear after it.
    const closed = new Promise<void>((resolve) => file.once('close', () => resolve()));
    try {
      await pipeline(Readable.fromWeb(body as Parameters<typeof Readable.fromWeb>[0]), limit, file, { signal });
    } catch (error) {
      file.destroy();
      await closed;
      if (error instanceof HubError) throw error;
      throw hubError('DownloadInterrupted', { reason: signal.aborted ? 'it took too long' : (error as Error).message });
    }
  }

  async list(): Promise<RepositoryEntry[]> {
    return (await this.catalog.list()).map(entryOf);
  }

  private async require(name: string): Promise<RepositoryPackage> {
    const stored = await this.catalog.find(name);
    if (!stored) throw hubError('PackageNotFound', { name });
    return stored;
  }

  async get(name: string): Promise<RepositoryEntry> {
    return entryOf(await this.require(name));
  }

  async rename(name: string, newName: string): Promise<RepositoryEntry> {
    const outcome = await this.catalog.rename(name, newName);
    if (outcome === 'missing') throw hubError('PackageNotFound', { name });
    if (outcome === 'taken') throw hubError('PackageNameTaken', { name: newName });
    return this.get(newName);
  }

  async delete(name: string): Promise<void> {
    if (!(await this.catalog.remove(name))) throw hubError('PackageNotFound', { name });
  }

  /** The archive of package `name`, byte for byte as it was uploaded. */
  async archive(name: string): Promise<PackageDownload> {
    const stored = await this.require(name);
    const stream = await this.catalog.archive(stored.sha256);
    // Deleted or replaced between the two reads: as if it had been a moment earlier.
    if (!stream) throw hubError('PackageNotFound', { name });
    return { fileName: stored.fileName, size: stored.size, sha256: stored.sha256, stream };
  }

  async icon(name: string): Promise<Buffer> {
    const stored = await this.require(name);
    if (!stored.icon) throw hubError('IconNotFound', { name });
    return stored.icon;
  }

  async xsd(name: string, settingKey: string): Promise<string> {
    const stored = await this.require(name);
    const xsds = JSON.parse(stored.xsds) as Record<string, string>;
    // Own keys only: `constructor` or `toString` must be a 404, not Object.prototype's function.
    const xsd = Object.hasOwn(xsds, settingKey) ? xsds[settingKey] : undefined;
    if (typeof xsd !== 'string') throw hubError('XsdNotFound', { name, setting: settingKey });
    return xsd;
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}
