/** The certificate of `--useHttps`: a given .pfx opened now, or a self-signed one kept for the next start. */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { CertificateOptionError, generatedCertificate, pfxCertificate } from '../../../tools/localHost/httpsCertificate';
import { newPfx } from '../../helpers/pfxFile';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'https-certificate-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const day = 24 * 3600_000;

function certificateOf(tls: { cert?: unknown }): X509Certificate {
  return new X509Certificate(tls.cert as string);
}

describe('generatedCertificate', () => {
  it('makes a certificate for localhost and 127.0.0.1, valid for a year, that a client trusting its PEM accepts', async () => {
    const generated = generatedCertificate(join(folder, '.local-https'));
    expect(generated.generated).toBe(true);
    const certificate = certificateOf(generated.tls);
    expect(certificate.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(Date.parse(certificate.validTo) - Date.now()).toBeGreaterThan(360 * day);

    const server = createServer(generated.tls, (_request, response) => response.end('over TLS'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const trusting = new Agent({ connect: { ca: certificateOf(generated.tls).toString() } });
    try {
      for (const host of ['127.0.0.1', 'localhost']) {
        const answer = await request(`https://${host}:${port}/`, { dispatcher: trusting });
        expect(await answer.body.text()).toBe('over TLS');
      }
      await expect(request(`https://127.0.0.1:${port}/`, { dispatcher: new Agent() })).rejects.toThrow(/self-signed certificate/);
    } finally {
      await trusting.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('keeps it for the next start, and makes a new one when it is about to expire or its files are damaged', () => {
    const at = new Date();
    const first = generatedCertificate(folder, at);
    const again = generatedCertificate(folder, new Date(at.getTime() + 300 * day));
    expect(again.generated).toBe(false);
    expect(certificateOf(again.tls).fingerprint256).toBe(certificateOf(first.tls).fingerprint256);

    const nearExpiry = generatedCertificate(folder, new Date(at.getTime() + 365 * day));
    expect(nearExpiry.generated).toBe(true);
    expect(certificateOf(nearExpiry.tls).fingerprint256).not.toBe(certificateOf(first.tls).fingerprint256);

    writeFileSync(nearExpiry.pemPath, 'not a certificate');
    expect(generatedCertificate(folder).generated).toBe(true);
  });
});

describe('the generated certificate', () => {
  it('says until when it is valid and when a new one is made', () => {
    expect(generatedCertificate(folder).description).toMatch(
      /valid until \d{4}-\d\d-\d\d; a start within a day of that makes a new one, which clients must then trust again\)$/,
    );
  });
});

describe('pfxCertificate', () => {
  const password = 'CANARY-SECRET-pfx-password';

  it('opens a .pfx with the password, or with a file holding it', () => {
    const { pfx } = newPfx(password);
    const pfxPath = join(folder, 'app.pfx');
    writeFileSync(pfxPath, pfx);
    const passwordFile = join(folder, 'password.txt');
    writeFileSync(passwordFile, `${password}\n`);
    for (const given of [password, passwordFile]) {
      expect(pfxCertificate(pfxPath, given).tls).toEqual({ pfx, passphrase: password });
    }
  });

  it('stops with a message naming --cert and --password, never the password, when it does not open', () => {
    const pfxPath = join(folder, 'app.pfx');
    writeFileSync(pfxPath, newPfx(password).pfx);
    let caught: unknown;
    try {
      pfxCertificate(pfxPath, 'CANARY-SECRET-wrong-password');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CertificateOptionError);
    expect((caught as Error).message).toMatch(new RegExp(`^--cert ${pfxPath} does not open with the --password given`));
    expect((caught as Error).message).not.toContain('CANARY-SECRET');
    expect(() => pfxCertificate(join(folder, 'missing.pfx'), password)).toThrow(/^--cert .*missing\.pfx: the file cannot be read/);
  });

  it('says a .pfx that opens but holds no private key has no key, not that the password is wrong', () => {
    const pfxPath = join(folder, 'certificate-only.pfx');
    writeFileSync(pfxPath, newPfx(password, { withoutKey: true }).pfx);
    expect(() => pfxCertificate(pfxPath, password)).toThrow(new RegExp(`^--cert ${pfxPath} opens with the --password given but holds no private key`));
    expect(() => pfxCertificate(pfxPath, password)).not.toThrow(/does not open/);
  });

  it('refuses an expired certificate, or one not valid yet, saying when', () => {
    const pfxPath = join(folder, 'app.pfx');
    writeFileSync(pfxPath, newPfx(password, { madeAt: new Date(Date.now() - 400 * day) }).pfx);
    expect(() => pfxCertificate(pfxPath, password)).toThrow(new RegExp(`^--cert ${pfxPath} expired on \\d{4}-\\d\\d-\\d\\dT.*every client would refuse it`));
    writeFileSync(pfxPath, newPfx(password, { madeAt: new Date(Date.now() + 2 * day) }).pfx);
    expect(() => pfxCertificate(pfxPath, password)).toThrow(new RegExp(`^--cert ${pfxPath} is not valid before`));
  });

  it('says until when a current certificate is valid', () => {
    const pfxPath = join(folder, 'app.pfx');
    writeFileSync(pfxPath, newPfx(password).pfx);
    expect(pfxCertificate(pfxPath, password).description).toMatch(/^HTTPS with the certificate of .*app\.pfx \(valid until \d{4}-\d\d-\d\d\)$/);
  });
});
