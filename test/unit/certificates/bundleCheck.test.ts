/** What a certificate bundle must be before it is stored. */
import { zipSync } from 'fflate';
import { checkBundle, decodeStrictBase64 } from '../../../src/certificates/bundleCheck';

const zipOf = (files: Record<string, string>) =>
  Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, new TextEncoder().encode(text)])))).toString('base64');

describe('checkBundle', () => {
  it('accepts a zip holding a .pfx and a .cer', () => {
    const result = checkBundle(zipOf({ 'env.PFX': 'private', 'env.cer': 'public' }));
    expect(result).toMatchObject({ ok: true, files: [{ name: 'env.PFX', bytes: 7 }, { name: 'env.cer', bytes: 6 }] });
  });

  it.each<[string, string | undefined, string]>([
    ['nothing', undefined, 'EmptyBundle'],
    ['base64 with stray characters', 'UEsDBA*#==', 'CorruptBase64'],
    ['base64 of the wrong length', 'UEsDB', 'CorruptBase64'],
    ['base64 that is not a zip', Buffer.from('just text, not a zip').toString('base64'), 'NotAZip'],
    ['a zip without the .pfx', zipOf({ 'env.cer': 'public' }), 'MissingPfx'],
    ['a zip without the .cer', zipOf({ 'env.pfx': 'private' }), 'MissingCer'],
    ['a zip whose .pfx is empty', zipOf({ 'env.pfx': '', 'env.cer': 'public' }), 'MissingPfx'],
  ])('refuses %s', (_title, input, problem) => {
    expect(checkBundle(input)).toMatchObject({ ok: false, problem });
  });

  it('decodes strict base64 only', () => {
    expect(decodeStrictBase64('aGVsbG8=')?.toString()).toBe('hello');
    expect(decodeStrictBase64('aGVs bG8=')?.toString()).toBe('hello');
    expect(decodeStrictBase64('aGVsbG8')).toBeUndefined();
    expect(decodeStrictBase64('')).toBeUndefined();
  });
});
