/**
 * The certificate of `npm start -- --useHttps`, as Core Tools' `func start --useHttps` takes it:
 * a `.pfx` given with `--cert` and `--password` (the password itself, or a file holding it), or
 * else a self-signed certificate for `localhost` and `127.0.0.1`, generated once and kept in a
 * folder for the next start, so that a client trusts it once.
 *
 * node-forge writes the certificate (pure JavaScript, no `openssl` needed); Node's crypto makes
 * the RSA key, in milliseconds where forge's own key generation takes seconds.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';
import forge from 'node-forge';
import { readPkcs12 } from '../../src/certificates';
import { writeWhole } from '../../src/loading';

export interface HttpsCertificate {
  /** What node:https serves with. */
  tls: SecureContextOptions;
  /** The certificate's PEM, for clients to trust (a generated one only). */
  pemPath?: string;
  /** One line for the terminal: which certificate, and until when. */
  description: string;
}

export class CertificateOptionError extends Error {}

/** Days a generated certificate is valid; it is made again when it expires within a day. */
const validityDays = 365;
const renewWithinMs = 24 * 3600_000;
/** Under the current folder, like local.settings.json; listed in .gitignore. */
export const generatedCertificateFolder = '.local-https';
export const generatedCertificateFile = 'localhost.pem';
const generatedKeyFile = 'localhost-key.pem';

/**
 * `--password`: the path of a file holding the password, when such a file exists, else the
 * password itself (Core Tools reads it the same way, trimming the file's text).
 */
function passwordOf(passwordOrFile: string): string {
  return existsSync(passwordOrFile) && statSync(passwordOrFile).isFile() ? readFileSync(passwordOrFile, 'utf8').trim() : passwordOrFile;
}

/**
 * The `.pfx` of `--cert`, opened with `--password` now, so a wrong password stops start-up
 * with a message instead of failing every handshake. Messages never repeat the password.
 */
export function pfxCertificate(certPath: string, passwordOrFile: string, now = new Date()): HttpsCertificate {
  let pfx: Buffer;
  try {
    pfx = readFileSync(certPath);
  } catch {
    throw new CertificateOptionError(`--cert ${certPath}: the file cannot be read.`);
  }
  const passphrase = passwordOf(passwordOrFile);
  const tls: SecureContextOptions = { pfx, passphrase };
  let context: SecureContext;
  try {
    context = createSecureContext(tls);
  } catch (error) {
    // Node opens the file first (a wrong password fails there), then looks for the key.
    if (/private key/i.test((error as Error).message)) {
      throw new CertificateOptionError(
        `--cert ${certPath} opens with the --password given but holds no private key, which serving HTTPS needs: export the certificate with its key ` +
          '(openssl pkcs12 -export -in cert.pem -inkey key.pem -out app.pfx; on Windows, "Yes, export the private key").',
      );
    }
    const legacy = legacyPfxTls(pfx, passphrase);
    if (legacy) return servedCertificate(legacy, createSecureContext(legacy), certPath, now);
    // OpenSSL's reason ("mac verify failure", "unsupported") names no secret.
    const reason = (error as Error).message.replace(/^error:[0-9A-F]+:/i, '');
    throw new CertificateOptionError(
      `--cert ${certPath} does not open with the --password given (${reason}): give the password of this .pfx (PKCS#12) file, or the path of a file holding it.`,
    );
  }
  return servedCertificate(tls, context, certPath, now);
}

function servedCertificate(tls: SecureContextOptions, context: SecureContext, certPath: string, now: Date): HttpsCertificate {
  const validTo = validityOf(context, certPath, now);
  return { tls, description: `HTTPS with the certificate of ${certPath}${validTo ? ` (valid until ${validTo})` : ''}` };
}

/**
 * The served certificate's end of validity, refusing one outside it: every client would then
 * fail with "certificate has expired" (or "not yet valid"), far from its cause. Read through the
 * secure context Node made of the file; a Node without that accessor skips the check.
 */
function validityOf(context: SecureContext, certPath: string, now: Date): string | undefined {
  const der = (context.context as { getCertificate?: () => Buffer | null }).getCertificate?.();
  if (!der) return undefined;
  const certificate = new X509Certificate(der);
  const validTo = new Date(certificate.validTo);
  const validFrom = new Date(certificate.validFrom);
  if (validTo.getTime() <= now.getTime()) {
    throw new CertificateOptionError(
      `--cert ${certPath} expired on ${validTo.toISOString()}: every client would refuse it. Give a current certificate, or leave out --cert and --password to use a generated one (renewed by itself).`,
    );
  }
  if (validFrom.getTime() > now.getTime()) {
    throw new CertificateOptionError(
      `--cert ${certPath} is not valid before ${validFrom.toISOString()}: every client would refuse it until then. Check this machine's clock, or give another certificate.`,
    );
  }
  return validTo.toISOString().slice(0, 10);
}

/**
 * A .pfx encrypted with RC2 or 3DES (older Windows tooling, `openssl -legacy`), which OpenSSL 3
 * refuses without its legacy provider ("Unsupported PKCS12 PFX data") on every Node from 17 on:
 * opened with the app's own PKCS#12 reader (node-forge, the same on every Node) and served as
 * PEM, the certificate of the key first. Undefined when that does not open it either.
 */
function legacyPfxTls(pfx: Buffer, passphrase: string): SecureContextOptions | undefined {
  const opened = readPkcs12(pfx, passphrase);
  if (!opened.ok || opened.privateKeys.length === 0) return undefined;
  try {
    const key = createPrivateKey({ key: opened.privateKeys[0]!, format: 'der', type: 'pkcs8' });
    const certificates = opened.certificates.map((der) => new X509Certificate(der));
    const leaf = certificates.find((certificate) => certificate.checkPrivateKey(key));
    if (!leaf) return undefined;
    const tls = {
      key: key.export({ format: 'pem', type: 'pkcs8' }),
      cert: [leaf, ...certificates.filter((other) => other !== leaf)].map((certificate) => certificate.toString()).join(''),
    };
    createSecureContext(tls);
    return tls;
  } catch {
    return undefined;
  }
}

/** The certificate and key kept in a folder, when both are there and readable. */
function keptCertificate(pemPath: string, keyPath: string): { certPem: string; keyPem: string; certificate: X509Certificate } | undefined {
  try {
    const certPem = readFileSync(pemPath, 'utf8');
    return { certPem, keyPem: readFileSync(keyPath, 'utf8'), certificate: new X509Certificate(certPem) };
  } catch {
    return undefined;
  }
}

/** A kept certificate is used again while it is valid for long enough and matches its key. */
function isUsable(kept: { keyPem: string; certificate: X509Certificate }, now: Date): boolean {
  const { certificate } = kept;
  const names = certificate.subjectAltName ?? '';
  try {
    return (
      Date.parse(certificate.validTo) - now.getTime() > renewWithinMs &&
      Date.parse(certificate.validFrom) <= now.getTime() &&
      names.includes('DNS:localhost') &&
      names.includes('IP Address:127.0.0.1') &&
      certificate.checkPrivateKey(createPrivateKey(kept.keyPem))
    );
  } catch {
    return false;
  }
}

/**
 * A self-signed certificate for `localhost`, `127.0.0.1` and `::1`. It is its own CA
 * (basicConstraints CA, keyCertSign, key identifiers), the shape `openssl req -x509` makes, so
 * that clients accept it as a trust anchor in `NODE_EXTRA_CA_CERTS`, `REQUESTS_CA_BUNDLE` or
 * `SSL_CERT_FILE` (Python 3.13 checks these extensions strictly).
 */
export function selfSignedCertificate(now: Date): { certPem: string; keyPem: string } {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(keys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  // A positive serial of 16 random bytes (RFC 5280 4.1.2.2: at most 20 octets).
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  certificate.serialNumber = serial.toString('hex');
  // An hour back, for clocks a little behind this one.
  certificate.validity.notBefore = new Date(now.getTime() - 3600_000);
  certificate.validity.notAfter = new Date(now.getTime() + validityDays * 24 * 3600_000);
  const subject = [
    { name: 'commonName', value: 'localhost' },
    { name: 'organizationName', value: 'management-gateway local development' },
  ];
  certificate.setSubject(subject);
  certificate.setIssuer(subject);
  certificate.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 7, ip: '127.0.0.1' },
        { type: 7, ip: '::1' },
      ],
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: true },
  ]);
  certificate.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(certificate), keyPem };
}

/**
 * The certificate kept in `folder`, made (again) when it is missing, unreadable, expires within
 * a day, or does not match its key.
 */
export function generatedCertificate(folder: string, now = new Date()): HttpsCertificate & { pemPath: string; generated: boolean } {
  const pemPath = join(folder, generatedCertificateFile);
  const keyPath = join(folder, generatedKeyFile);
  const kept = keptCertificate(pemPath, keyPath);
  const reused = kept !== undefined && isUsable(kept, now);
  const { certPem, keyPem } = reused ? kept : selfSignedCertificate(now);
  if (!reused) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeWhole(keyPath, keyPem, 0o600);
    writeWhole(pemPath, certPem, 0o644);
  }
  const validTo = new Date(new X509Certificate(certPem).validTo).toISOString().slice(0, 10);
  return {
    tls: { key: keyPem, cert: certPem },
    pemPath,
    generated: !reused,
    description:
      `HTTPS with a self-signed certificate for localhost and 127.0.0.1 (${reused ? 'kept from an earlier start' : 'generated now'}, valid until ${validTo}; ` +
      'a start within a day of that makes a new one, which clients must then trust again)',
  };
}

/** What the terminal says about trusting a generated certificate. */
export function trustHints(pemPath: string): string[] {
  return [
    `  Its PEM: ${pemPath}. Trust it, for example for one shell:`,
    `    export NODE_EXTRA_CA_CERTS="${pemPath}"    # Node.js, the Azure SDK for JS`,
    `    export REQUESTS_CA_BUNDLE=<bundle>             # Python requests, the Azure SDK for Python, az CLI`,
    `    export SSL_CERT_FILE=<bundle>                  # OpenSSL-based tools; curl: --cacert "${pemPath}"`,
    '  REQUESTS_CA_BUNDLE and SSL_CERT_FILE replace the default bundle: make <bundle> a copy of yours with this PEM appended (README, "Use it from your tools").',
  ];
}
