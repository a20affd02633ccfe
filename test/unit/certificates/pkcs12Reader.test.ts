/**
 * The PKCS#12 reader on files OpenSSL wrote (both encryptions Windows tooling writes), and on
 * hostile ones: every iteration count is held to one budget before anything is derived.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { maxPfxDerivations, maxPfxIterations, maxPfxPasswordLength, maxPfxSaltBytes, readPkcs12 } from '../../../src/certificates/pkcs12Reader';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'certificates');
const fixture = (name: string) => readFileSync(join(fixtures, name));
const password = 'pässwörd-€-fixture';
const certificateDer = fixture('certificate.cer');

type Node = forge.asn1.Asn1;
const parse = (bytes: string): Node =>
  (forge.asn1.fromDer as unknown as (bytes: string, options: object) => Node)(bytes, { strict: false, decodeBitStrings: false });
const derOf = (node: Node) => forge.asn1.toDer(node).getBytes();
const at = (node: Node, ...path: number[]): Node => path.reduce((current, index) => (current.value as Node[])[index]!, node);
const setCount = (node: Node, count: number) => {
  const hex = count.toString(16).padStart(8, '0');
  node.value = Buffer.from(`00${hex}`, 'hex').toString('binary');
};

/**
 * Rewrites a fixture without its MAC (legal: RFC 7292 makes it optional), so its insides can be
 * changed: `edit` gets the authenticated safe's ContentInfos, which in an OpenSSL file are the
 * encrypted certificates, then the key in plain data.
 */
function rewritten(name: string, edit: (contentInfos: Node[], keyBags: Node) => void, keepMac = false): Buffer {
  const pfx = parse(fixture(name).toString('binary'));
  if (keepMac) {
    edit([], pfx);
    return Buffer.from(derOf(pfx), 'binary');
  }
  const authSafeOctets = at(pfx, 1, 1, 0);
  const authSafe = parse(authSafeOctets.value as string);
  const contentInfos = authSafe.value as Node[];
  const keyOctets = at(contentInfos[1]!, 1, 0);
  const keyBags = parse(keyOctets.value as string);
  edit(contentInfos, keyBags);
  keyOctets.value = derOf(keyBags);
  authSafeOctets.value = derOf(authSafe);
  (pfx.value as Node[]).splice(2, 1);
  return Buffer.from(derOf(pfx), 'binary');
}

/** The PBKDF2 iteration count of a PBES2 AlgorithmIdentifier. */
const pbkdf2Count = (algorithmIdentifier: Node) => at(algorithmIdentifier, 1, 0, 1, 1);

describe('readPkcs12', () => {
  it.each([
    ['PBES2 / AES-256-CBC with a SHA-256 MAC (OpenSSL 3, current Windows)', 'aes256.pfx'],
    ['pbeWithSHAAnd3-KeyTripleDES-CBC key, pbeWithSHAAnd40BitRC2-CBC certificate, SHA-1 MAC (older Windows tooling)', 'legacy-3des-rc2.pfx'],
  ])('opens %s: the key, and the certificate byte for byte', (_title, name) => {
    const opened = readPkcs12(fixture(name), password);
    expect(opened).toMatchObject({ ok: true, privateKeys: [expect.any(Buffer)] });
    expect(opened.ok && opened.certificates).toEqual([certificateDer]);
  });

  it('opens a file without a MAC, as RFC 7292 allows', () => {
    expect(
      readPkcs12(
        rewritten('aes256.pfx', () => undefined),
        password,
      ),
    ).toMatchObject({ ok: true, certificates: [certificateDer] });
  });

  it.each([
    ['a wrong password', fixture('aes256.pfx'), 'not-the-password', 'PfxPasswordInvalid'],
    ['a wrong password (legacy encryption)', fixture('legacy-3des-rc2.pfx'), 'not-the-password', 'PfxPasswordInvalid'],
    ['a wrong password and no MAC: the decryption fails', rewritten('legacy-3des-rc2.pfx', () => undefined), 'not-the-password', 'PfxPasswordInvalid'],
    ['bytes that are not ASN.1', Buffer.from('certainly not a pfx'), password, 'PfxUnreadable'],
    ['a truncated file', fixture('aes256.pfx').subarray(0, 1000), password, 'PfxUnreadable'],
    ['a certificate where the .pfx should be', certificateDer, password, 'PfxUnreadable'],
    ['ASN.1 nested 100,000 deep', Buffer.alloc(200_000, Buffer.from('3080', 'hex')), password, 'PfxUnreadable'],
  ])('refuses %s', (_title, pfx, secret, problem) => {
    expect(readPkcs12(pfx, secret)).toMatchObject({ ok: false, problem });
  });

  describe('iteration counts are held to a budget before anything is derived', () => {
    // Each would hold the event loop for minutes to hours if derived.
    it.each([
      ['the MAC', rewritten('aes256.pfx', (_contentInfos, pfx) => setCount(at(pfx, 2, 2), 2 ** 31 - 1), true)],
      ['the encrypted certificates', rewritten('aes256.pfx', (contentInfos) => setCount(pbkdf2Count(at(contentInfos[0]!, 1, 0, 1, 1)), 2 ** 31 - 1))],
      ['the encrypted key', rewritten('aes256.pfx', (_contentInfos, keyBags) => setCount(pbkdf2Count(at(keyBags, 0, 1, 0, 0)), 2 ** 31 - 1))],
      ['the legacy encrypted key', rewritten('legacy-3des-rc2.pfx', (_contentInfos, keyBags) => setCount(at(keyBags, 0, 1, 0, 0, 1, 1), 2 ** 31 - 1))],
      // Each count alone is within the budget; together they are not.
      ['the whole file', rewritten('aes256.pfx', (_contentInfos, keyBags) => setCount(pbkdf2Count(at(keyBags, 0, 1, 0, 0)), maxPfxIterations - 1000))],
    ])('%s', (_title, pfx) => {
      expect(readPkcs12(pfx, password)).toMatchObject({ ok: false, problem: 'PfxTooCostly' });
    });
  });

  describe('so is the number and the size of the derivations', () => {
    it(`refuses more than ${maxPfxDerivations} encrypted contents, each cheap, even holding no bag`, () => {
      const many = rewritten('aes256.pfx', (contentInfos) => {
        const encrypted = contentInfos[0]!;
        for (let copy = 0; copy < maxPfxDerivations + 2; copy += 1) contentInfos.unshift(encrypted);
      });
      expect(readPkcs12(many, password)).toMatchObject({ ok: false, problem: 'PfxTooCostly', message: expect.stringContaining('key derivations') });
    });

    it('refuses a salt longer than any real one', () => {
      // The key's PBKDF2 salt: AlgorithmIdentifier → PBES2 parameters → key derivation → its parameters → salt.
      const salted = rewritten('aes256.pfx', (_contentInfos, keyBags) => {
        at(keyBags, 0, 1, 0, 0, 1, 0, 1, 0).value = 's'.repeat(maxPfxSaltBytes + 1);
      });
      expect(readPkcs12(salted, password)).toMatchObject({ ok: false, problem: 'PfxTooCostly', message: expect.stringContaining('salt') });
    });

    it('refuses a password longer than any real one, before deriving', () => {
      expect(readPkcs12(fixture('aes256.pfx'), 'p'.repeat(maxPfxPasswordLength + 1))).toMatchObject({
        ok: false,
        problem: 'PfxTooCostly',
        message: expect.stringContaining('password'),
      });
    });
  });
});
