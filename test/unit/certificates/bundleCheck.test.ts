/** What a certificate bundle must be before it is stored, and what a hostile one cannot do. */
import { zipSync } from 'fflate';
import { checkBundle, decodeStrictBase64, maxBundleEntries } from '../../../src/certificates/bundleCheck';

const maxBytes = 1024 * 1024;
const zipBytesOf = (files: Record<string, string | Uint8Array>) =>
  Buffer.from(
    zipSync(
      Object.fromEntries(Object.entries(files).map(([name, content]) => [name, typeof content === 'string' ? new TextEncoder().encode(content) : content])),
    ),
  );
const zipOf = (files: Record<string, string | Uint8Array>) => zipBytesOf(files).toString('base64');

/** Rewrites the uncompressed size of every entry, in the central directory and in the local headers. */
function declareSize(zip: Buffer, size: number): Buffer {
  const patched = Buffer.from(zip);
  for (let offset = 0; offset < patched.length - 4; offset += 1) {
    const signature = patched.readUInt32LE(offset);
    if (signature === 0x02014b50) patched.writeUInt32LE(size, offset + 24);
    if (signature === 0x04034b50) patched.writeUInt32LE(size, offset + 22);
  }
  return patched;
}

describe('checkBundle', () => {
  it('accepts a zip holding a .pfx and a .cer, and gives their contents', async () => {
    const result = await checkBundle(zipOf({ 'env.PFX': 'private', 'env.cer': 'public' }), maxBytes);
    expect(result).toMatchObject({
      ok: true,
      files: [
        { name: 'env.PFX', bytes: 7 },
        { name: 'env.cer', bytes: 6 },
      ],
    });
    expect(result.ok && result.files[1]!.content.toString()).toBe('public');
  });

  it('gives the first non-empty .pfx and .cer, in zip order, for the certificate check', async () => {
    const result = await checkBundle(zipOf({ 'empty.pfx': '', 'a.cer': 'first', 'b.pfx': 'private', 'c.cer': 'second' }), maxBytes);
    expect(result).toMatchObject({ ok: true, pfx: { name: 'b.pfx' }, cer: { name: 'a.cer' } });
  });

  it.each<[string, string | undefined, string]>([
    ['nothing', undefined, 'EmptyBundle'],
    ['base64 with stray characters', 'UEsDBA*#==', 'CorruptBase64'],
    ['base64 of the wrong length', 'UEsDB', 'CorruptBase64'],
    ['base64 that is not a zip', Buffer.from('just text, not a zip').toString('base64'), 'NotAZip'],
    ['a zip without the .pfx', zipOf({ 'env.cer': 'public' }), 'MissingPfx'],
    ['a zip without the .cer', zipOf({ 'env.pfx': 'private' }), 'MissingCer'],
    ['a zip whose .pfx is empty', zipOf({ 'env.pfx': '', 'env.cer': 'public' }), 'MissingPfx'],
  ])('refuses %s', async (_title, input, problem) => {
    expect(await checkBundle(input, maxBytes)).toMatchObject({ ok: false, problem });
  });

  describe('zip bombs', () => {
    it('refuses entries that declare more than the bound, before inflating them', async () => {
      // 8 MiB of zeros compress to a few KB: small on the wire, large in memory.
      const result = await checkBundle(zipOf({ 'env.pfx': new Uint8Array(8 * maxBytes), 'env.cer': 'public' }), maxBytes);
      expect(result).toMatchObject({ ok: false, problem: 'BundleTooLarge' });
    });

    it('refuses an entry that inflates past the size it declares', async () => {
      // Declares 4 KB, holds 64 MiB: the old reader inflated it all (into a 4 KB buffer) and accepted it.
      const lying = declareSize(zipBytesOf({ 'env.pfx': new Uint8Array(64 * maxBytes), 'env.cer': new Uint8Array(4096) }), 4096);
      const memoryBefore = process.memoryUsage().rss;
      const result = await checkBundle(lying.toString('base64'), maxBytes);
      expect(result).toMatchObject({ ok: false, problem: 'BundleTooLarge' });
      expect(process.memoryUsage().rss - memoryBefore).toBeLessThan(32 * maxBytes);
    });

    it(`refuses more than ${maxBundleEntries} entries`, async () => {
      const files = Object.fromEntries(Array.from({ length: maxBundleEntries + 1 }, (_, index) => [`part${index}.cer`, 'x']));
      expect(await checkBundle(zipOf({ ...files, 'env.pfx': 'private' }), maxBytes)).toMatchObject({ ok: false, problem: 'BundleTooLarge' });
    });
  });

  it('decodes strict base64 only', () => {
    expect(decodeStrictBase64('aGVsbG8=')?.toString()).toBe('hello');
    expect(decodeStrictBase64('aGVs bG8=')?.toString()).toBe('hello');
    expect(decodeStrictBase64('aGVsbG8')).toBeUndefined();
    expect(decodeStrictBase64('')).toBeUndefined();
  });
});
