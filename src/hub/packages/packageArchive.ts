/**
 * Reading and validating a package archive: a zip with `manifest.json` at its root (docs/repository.md).
 * Refuses what is not a readable zip, entries that escape their folder, archives that would unpack
 * beyond the limits (zip bombs), and manifests that do not match the schema.
 */
import type { Readable } from 'node:stream';
import type yauzl from 'yauzl';
import { z } from 'zod';
import { nameSchema } from '../../config/names.js';
import { hubError } from '../../errors.js';
import { requestName } from '../access/requestNames.js';

export interface ArchiveLimits {
  maxEntries: number;
  maxUncompressedBytes: number;
}

const MAX_MEMBER_BYTES = 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export const settingTypes = ['String', 'Int32', 'Int64', 'Double', 'Boolean', 'Json', 'Xml'] as const;

const manifestSchema = z.object({
  Name: nameSchema,
  Version: z.string().min(1, 'must not be empty').max(64),
  Description: z.string().max(4000).default(''),
  Author: z.string().max(256).default(''),
  Icon: z.string().min(1).optional(),
  Settings: z
    .array(
      z
        .object({
          Key: requestName(256).min(1, 'must not be empty'),
          Type: z.enum(settingTypes).default('String'),
          Description: z.string().max(4000).default(''),
          DefaultValue: z.unknown().optional(),
          Xsd: z.string().min(1).optional(),
        })
        .refine((s) => s.Xsd === undefined || s.Type === 'Xml', {
          message: 'may name an Xsd only for a setting of Type Xml',
          path: ['Xsd'],
        }),
    )
    .default([]),
});

export type PackageManifest = z.infer<typeof manifestSchema>;

export interface PackageContents {
  manifest: PackageManifest;
  icon: Buffer | undefined;
  /** Setting key → XSD text. */
  xsds: Record<string, string>;
}

const refuse = (reason: string) => hubError('InvalidPackage', { reason });

// yauzl and fast-xml-parser are loaded by the first archive read, not by every hub process at start
// (~2 MiB of heap each process would keep for what only package uploads and downloads use).
async function openZip(file: string): Promise<yauzl.ZipFile> {
  const { default: zipReader } = await import('yauzl');
  return new Promise((resolve, reject) => {
    zipReader.open(
      file,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true, decodeStrings: true },
      (error, zip) => {
        if (error || !zip) reject(refuse(`not a readable zip archive (${error?.message ?? 'unknown error'})`));
        else resolve(zip);
      },
    );
  });
}

/** Lists every entry, enforcing the entry count, the declared total size and safe names. */
function listEntries(zip: yauzl.ZipFile, limits: ArchiveLimits): Promise<Map<string, yauzl.Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, yauzl.Entry>();
    let total = 0;
    zip.on('error', (error: Error) => reject(refuse(error.message)));
    zip.on('entry', (entry: yauzl.Entry) => {
      const name = entry.fileName;
      if (name.includes('\\') || name.startsWith('/') || name.split('/').includes('..')) {
        return reject(refuse(`the entry '${name}' would be written outside the package folder`));
      }
      total += entry.uncompressedSize;
      if (entries.size + 1 > limits.maxEntries) return reject(refuse(`more than ${limits.maxEntries} entries`));
      if (total > limits.maxUncompressedBytes) {
        return reject(refuse(`it would unpack to more than ${limits.maxUncompressedBytes} bytes`));
      }
      entries.set(name, entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.readEntry();
  });
}

function readMember(zip: yauzl.ZipFile, entry: yauzl.Entry, what: string): Promise<Buffer> {
  if (entry.uncompressedSize > MAX_MEMBER_BYTES)
    return Promise.reject(refuse(`${what} is larger than ${MAX_MEMBER_BYTES} bytes`));
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream?: Readable) => {
      if (error || !stream) return reject(refuse(`${what} cannot be read (${error?.message ?? 'no data'})`));
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_MEMBER_BYTES) stream.destroy(refuse(`${what} is larger than ${MAX_MEMBER_BYTES} bytes`));
        else chunks.push(chunk);
      });
      stream.on('error', (e: Error) =>
        reject(e instanceof Error && 'status' in e ? e : refuse(`${what} cannot be read (${e.message})`)),
      );
      stream.on('end', () => resolve(Buffer.concat(chunks)));
    });
  });
}

/**
 * Inflates every entry once, counting the bytes that really come out: an entry whose header declares
 * 100 B but holds 100 MiB is refused as soon as it passes its declared size (yauzl's size check), and
 * the real total is held to the unpacked limit. Headers alone cannot be trusted.
 */
async function checkActualSizes(
  zip: yauzl.ZipFile,
  entries: Map<string, yauzl.Entry>,
  limits: ArchiveLimits,
): Promise<void> {
  let total = 0;
  for (const entry of entries.values()) {
    if (entry.fileName.endsWith('/')) continue;
    await new Promise<void>((resolve, reject) => {
      zip.openReadStream(entry, (error, stream?: Readable) => {
        if (error || !stream)
          return reject(refuse(`the entry '${entry.fileName}' cannot be read (${error?.message ?? 'no data'})`));
        stream.on('data', (chunk: Buffer) => {
          total += chunk.length;
          if (total > limits.maxUncompressedBytes)
            stream.destroy(refuse(`it would unpack to more than ${limits.maxUncompressedBytes} bytes`));
        });
        stream.on('error', (e: Error) =>
          reject(
            e instanceof Error && 'status' in e
              ? e
              : refuse(`the entry '${entry.fileName}' does not hold what its header says (${e.message})`),
          ),
        );
        stream.on('end', () => resolve());
      });
    });
  }
}

export async function readPackageArchive(file: string, limits: ArchiveLimits): Promise<PackageContents> {
  const zip = await openZip(file);
  try {
    const entries = await listEntries(zip, limits);
    await checkActualSizes(zip, entries, limits);
    const manifestEntry = entries.get('manifest.json');
    if (!manifestEntry) throw refuse('it has no manifest.json at its root');
    let raw: unknown;
    try {
      raw = JSON.parse((await readMember(zip, manifestEntry, 'manifest.json')).toString('utf8'));
    } catch (error) {
      if (error instanceof SyntaxError) throw refuse(`manifest.json is not JSON (${error.message})`);
      throw error;
    }
    const parsed = manifestSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw refuse(`manifest.json ${issue.path.map(String).join('.') || '(root)'} ${issue.message}`);
    }
    const manifest = parsed.data;
    const member = (path: string, what: string) => {
      const entry = entries.get(path);
      if (!entry) throw refuse(`${what} '${path}' named by the manifest is not in the archive`);
      return readMember(zip, entry, what);
    };
    let icon: Buffer | undefined;
    if (manifest.Icon) {
      icon = await member(manifest.Icon, 'the icon');
      if (!icon.subarray(0, 8).equals(PNG_SIGNATURE)) throw refuse(`the icon '${manifest.Icon}' is not a PNG image`);
    }
    const xsds = Object.create(null) as Record<string, string>;
    const { XMLValidator } = await import('fast-xml-parser');
    for (const setting of manifest.Settings) {
      if (!setting.Xsd) continue;
      const text = (await member(setting.Xsd, `the XSD of setting '${setting.Key}'`)).toString('utf8');
      if (XMLValidator.validate(text) !== true) throw refuse(`the XSD '${setting.Xsd}' is not well-formed XML`);
      xsds[setting.Key] = text;
    }
    return { manifest, icon, xsds };
  } finally {
    zip.close();
  }
}
