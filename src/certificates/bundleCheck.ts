/**
 * Checks a downloaded certificate bundle before it may be stored:
 * strict base64, a readable zip, and in it at least one .pfx and one .cer, all within a size
 * bound (`CERT_MAX_BUNDLE_BYTES`). What the .pfx and .cer hold is certificateVerification's to judge.
 *
 * yauzl reads the zip. A bundle is a few kilobytes, so anything big is hostile: a 1 MB zip can
 * hold a 1 GiB `.pfx`. yauzl reads the central directory first, so entries are counted and
 * their declared sizes checked before a byte is inflated; and it inflates as a stream that
 * fails at the first byte past the declared size, so an entry that lies about its size costs
 * no more than an honest one. (fflate, used before, inflates a whole entry at once: with a
 * lying size it spent 4 s of CPU on a 1 MiB entry.)
 */
import type { Entry, ZipFile } from 'yauzl';
import { yauzlPackage } from '../loading';

export type BundleProblem = 'CorruptBase64' | 'NotAZip' | 'BundleTooLarge' | 'MissingPfx' | 'MissingCer' | 'EmptyBundle';

export interface BundleFile {
  name: string;
  bytes: number;
  content: Buffer;
}

export interface CheckedBundle {
  ok: true;
  zip: Buffer;
  files: BundleFile[];
  /** The first non-empty .pfx and .cer, in zip order (as d365fo.tools picks them). */
  pfx: BundleFile;
  cer: BundleFile;
}

export interface RejectedBundle {
  ok: false;
  problem: BundleProblem;
  message: string;
}

/** Entries a bundle may hold: a .pfx and a .cer, with room for a chain or a readme. */
export const maxBundleEntries = 16;

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Base64 decoding that refuses what Buffer.from would silently skip. */
export function decodeStrictBase64(encoded: string): Buffer | undefined {
  const compact = encoded.replace(/\s+/g, '');
  if (compact === '' || !base64Pattern.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

const rejected = (problem: BundleProblem, message: string): RejectedBundle => ({ ok: false, problem, message });

class TooLarge extends Error {}

/** The entries of the central directory, refused as soon as one passes a bound. */
async function listEntries(zipfile: ZipFile, maxBytes: number): Promise<Entry[]> {
  if (zipfile.entryCount > maxBundleEntries)
    throw new TooLarge(`The certificate zip holds ${zipfile.entryCount} entries; at most ${maxBundleEntries} are accepted.`);
  const entries: Entry[] = [];
  let declared = 0;
  for await (const entry of zipfile.eachEntry()) {
    declared += entry.uncompressedSize;
    if (entry.compressedSize > maxBytes || declared > maxBytes) {
      throw new TooLarge(`The certificate zip's entries declare more than ${maxBytes} bytes.`);
    }
    entries.push(entry);
  }
  return entries;
}

async function readEntry(zipfile: ZipFile, entry: Entry): Promise<Buffer> {
  const stream = await zipfile.openReadStreamPromise(entry);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function checkBundle(zipBase64: string | undefined | null, maxBytes: number): Promise<CheckedBundle | RejectedBundle> {
  if (!zipBase64) return rejected('EmptyBundle', 'The answer holds no certificate zip.');
  const zip = decodeStrictBase64(zipBase64);
  if (!zip) return rejected('CorruptBase64', 'The certificate zip is not valid base64.');
  let files: BundleFile[];
  let zipfile: ZipFile | undefined;
  try {
    zipfile = await yauzlPackage().fromBufferPromise(zip, { validateEntrySizes: true, strictFileNames: false });
    const entries = (await listEntries(zipfile, maxBytes)).filter((entry) => !entry.fileName.endsWith('/'));
    files = [];
    for (const entry of entries) {
      const content = await readEntry(zipfile, entry);
      files.push({ name: entry.fileName, bytes: content.byteLength, content });
    }
  } catch (error) {
    if (error instanceof TooLarge) return rejected('BundleTooLarge', error.message);
    // yauzl's check of the declared size: an entry that inflates past what it declared.
    if (/too many bytes/.test((error as Error).message))
      return rejected('BundleTooLarge', 'An entry of the certificate zip inflates past the size it declares.');
    return rejected('NotAZip', `The certificate bundle is not a readable zip (${(error as Error).message.slice(0, 200)}).`);
  } finally {
    zipfile?.close();
  }
  const first = (extension: string) => files.find((file) => file.name.toLowerCase().endsWith(extension) && file.bytes > 0);
  const pfx = first('.pfx');
  if (!pfx) return rejected('MissingPfx', 'The certificate zip holds no .pfx file.');
  const cer = first('.cer');
  if (!cer) return rejected('MissingCer', 'The certificate zip holds no .cer file.');
  return { ok: true, zip, files, pfx, cer };
}
