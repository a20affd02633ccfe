/**
 * Checks a downloaded certificate bundle before it may be stored (DESIGN.md section 5):
 * strict base64, a readable zip, and in it at least one .pfx and one .cer. fflate reads the
 * zip: a small, maintained, dependency-free reader, rather than a parser of our own.
 */
import { unzipSync } from 'fflate';

export type BundleProblem = 'CorruptBase64' | 'NotAZip' | 'MissingPfx' | 'MissingCer' | 'EmptyBundle';

export interface CheckedBundle {
  ok: true;
  zip: Buffer;
  files: { name: string; bytes: number }[];
}

export interface RejectedBundle {
  ok: false;
  problem: BundleProblem;
  message: string;
}

const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Base64 decoding that refuses what Buffer.from would silently skip. */
export function decodeStrictBase64(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, '');
  if (compact === '' || !base64Pattern.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

export function checkBundle(zipBase64: string | undefined | null): CheckedBundle | RejectedBundle {
  if (!zipBase64) return { ok: false, problem: 'EmptyBundle', message: 'The answer holds no certificate zip.' };
  const zip = decodeStrictBase64(zipBase64);
  if (!zip) return { ok: false, problem: 'CorruptBase64', message: 'The certificate zip is not valid base64.' };
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(zip);
  } catch {
    return { ok: false, problem: 'NotAZip', message: 'The certificate bundle is not a readable zip.' };
  }
  const files = Object.entries(entries)
    .filter(([name]) => !name.endsWith('/'))
    .map(([name, content]) => ({ name, bytes: content.byteLength }));
  const has = (extension: string) => files.some((file) => file.name.toLowerCase().endsWith(extension) && file.bytes > 0);
  if (!has('.pfx')) return { ok: false, problem: 'MissingPfx', message: 'The certificate zip holds no .pfx file.' };
  if (!has('.cer')) return { ok: false, problem: 'MissingCer', message: 'The certificate zip holds no .cer file.' };
  return { ok: true, zip, files };
}
