/**
 * When a bundle may become current: real PKCS#12 files of both encryptions from
 * OpenSSL, and bundles of the emulator's builder for the faults a careful operator refuses.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { verifyCertificateBundle, type BundleToVerify } from '../../../src/certificates/certificateVerification';
import { makeCertificateBundle, type BundleFault } from '../../../tools/emulator/certificateBundle';
import { faultRefusals } from '../../helpers/certificateRefusals';

const fixture = (name: string) => readFileSync(join(__dirname, '..', '..', 'fixtures', 'certificates', name));
const password = 'pässwörd-€-fixture';
const thumbprint = '3F0B78BDC93C8884D9CE3C4223FFFF65556D351C';
const notBefore = Date.parse('2026-11-23T04:08:34Z');
const notAfter = Date.parse('2036-11-20T04:08:34Z');
const fixtureBundle: BundleToVerify = {
  pfx: fixture('aes256.pfx'),
  cer: fixture('certificate.cer'),
  password,
  expectedThumbprint: thumbprint,
  now: Date.parse('2030-01-01T00:00:00Z'),
};

describe('verifyCertificateBundle', () => {
  it.each<[string, Partial<BundleToVerify>]>([
    ['PBES2 / AES-256 (OpenSSL 3, current Windows)', {}],
    ['the legacy 3DES / RC2-40 encryption (older Windows tooling)', { pfx: fixture('legacy-3des-rc2.pfx') }],
    ['a PEM .cer', { cer: fixture('certificate.pem') }],
    ['a thumbprint in lower case, with spaces around', { expectedThumbprint: ` ${thumbprint.toLowerCase()} ` }],
    ['the first moment of validity', { now: notBefore }],
    ['the last moment of validity', { now: notAfter }],
  ])('accepts %s, with the metadata from the certificate', (_title, change) => {
    expect(verifyCertificateBundle({ ...fixtureBundle, ...change })).toEqual({
      ok: true,
      thumbprint,
      notBefore: new Date(notBefore).toISOString(),
      expiresAt: new Date(notAfter).toISOString(),
      subject: 'CN=gateway-fixture, O=Fixture',
      issuer: 'CN=gateway-fixture, O=Fixture',
    });
  });

  it.each<[string, Partial<BundleToVerify>, string]>([
    ['a wrong password', { password: 'not-the-password' }, 'PfxPasswordInvalid'],
    ['a wrong password (legacy encryption)', { pfx: fixture('legacy-3des-rc2.pfx'), password: 'not-the-password' }, 'PfxPasswordInvalid'],
    ['a .pfx that is not PKCS#12', { pfx: Buffer.from('not a pfx') }, 'PfxUnreadable'],
    ['a .pfx without its key', { pfx: fixture('without-key.pfx') }, 'PfxWithoutKey'],
    ['a thumbprint naming another certificate', { expectedThumbprint: '0123456789ABCDEF0123456789ABCDEF01234567' }, 'ThumbprintMismatch'],
    ['a .cer that is not a certificate', { cer: Buffer.from('not a certificate') }, 'CerUnreadable'],
    ['an expired certificate', { now: notAfter + 1000 }, 'CertificateExpired'],
    ['a certificate not valid yet', { now: notBefore - 1000 }, 'CertificateNotYetValid'],
  ])('refuses %s', (_title, change, problem) => {
    expect(verifyCertificateBundle({ ...fixtureBundle, ...change })).toMatchObject({ ok: false, problem, message: expect.any(String) });
  });

  describe("the emulator's bundles", () => {
    const now = Date.parse('2026-06-01T00:00:00Z');
    const verify = (fault?: BundleFault, options: { encryption?: 'aes256' | '3des'; pemCer?: boolean } = {}) => {
      const bundle = makeCertificateBundle('env', now, { fault, ...options });
      return {
        bundle,
        verdict: verifyCertificateBundle({ pfx: bundle.pfx, cer: bundle.cer, password: bundle.password, expectedThumbprint: bundle.thumbprint, now }),
      };
    };

    it.each([['aes256' as const], ['3des' as const]])('a good one (%s) is accepted, expiring when the certificate does', (encryption) => {
      const { bundle, verdict } = verify(undefined, { encryption, pemCer: encryption === '3des' });
      expect(verdict).toMatchObject({ ok: true, thumbprint: bundle.thumbprint, expiresAt: bundle.notAfter.toISOString(), subject: 'CN=RSAT env' });
    });

    it.each(faultRefusals)('%s is refused as %s', (fault, problem) => {
      expect(verify(fault).verdict).toMatchObject({ ok: false, problem });
    });
  });

  it("refuses a .pfx whose certificate is not its key's", () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const otherKey = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
    const certificate = forge.pki.certificateFromPem(fixture('certificate.pem').toString());
    const pfx = Buffer.from(forge.asn1.toDer(forge.pkcs12.toPkcs12Asn1(otherKey, certificate, password, { algorithm: '3des' })).getBytes(), 'binary');
    expect(verifyCertificateBundle({ ...fixtureBundle, pfx })).toMatchObject({ ok: false, problem: 'PfxWithoutCertificate' });
  });
});
