/**
 * Whether a downloaded bundle may become current: the .pfx opens
 * with the secret and holds a private key and its certificate; that certificate is the one
 * `CertificateThumbprint` names and the one in the .cer; and it is valid now. A pure function of
 * the bytes, the password, the thumbprint and the time, so each rule is tested with a table.
 *
 * PKCS#12 decryption is node-forge's (pkcs12Reader); reading the certificates and matching the
 * key is Node's own X509Certificate, which parses DER and PEM natively, RSA and EC alike.
 */
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readPkcs12, type Pkcs12Problem } from './pkcs12Reader';

export type VerificationProblem =
  | Pkcs12Problem
  | 'PfxWithoutKey'
  | 'PfxWithoutCertificate'
  | 'ThumbprintMismatch'
  | 'CerUnreadable'
  | 'CerMismatch'
  | 'CertificateExpired'
  | 'CertificateNotYetValid';

/** What the certificate itself says; `expiresAt` is its notAfter. */
export interface VerifiedCertificate {
  ok: true;
  thumbprint: string;
  notBefore: string;
  expiresAt: string;
  subject: string;
  issuer: string;
}

export interface RefusedCertificate {
  ok: false;
  problem: VerificationProblem;
  message: string;
}

export interface BundleToVerify {
  pfx: Buffer;
  cer: Buffer;
  /** The .pfx password: the decoded `CertificateSecretEncoded`. */
  password: string;
  /** `CertificateThumbprint` as the service answered it. */
  expectedThumbprint: string;
  now: number;
}

/** Names longer than this are cut: they are stored and shown, and a hostile one could be long. */
const maxNameLength = 512;

const refused = (problem: VerificationProblem, message: string): RefusedCertificate => ({ ok: false, problem, message });

/** SHA-1 of the DER, in upper-case hex: the thumbprint Windows shows and the service answers. */
export function thumbprintOf(der: Buffer): string {
  return createHash('sha1').update(der).digest('hex').toUpperCase();
}

function certificateOf(bytes: Buffer): X509Certificate | undefined {
  try {
    return new X509Certificate(bytes);
  } catch {
    return undefined;
  }
}

function keyOf(der: Buffer): KeyObject | undefined {
  try {
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } catch {
    return undefined;
  }
}

/** "CN=a\nO=b" as Node gives it, on one line and bounded. */
const oneLine = (name: string) => name.split('\n').join(', ').slice(0, maxNameLength);

/** Of the .pfx's certificates, the one whose public key is one of its private keys. */
function certificateOfKey(certificates: Buffer[], keys: KeyObject[]): X509Certificate | undefined {
  for (const der of certificates) {
    const certificate = certificateOf(der);
    if (certificate && keys.some((key) => certificate.checkPrivateKey(key))) return certificate;
  }
  return undefined;
}

export function verifyCertificateBundle(bundle: BundleToVerify): VerifiedCertificate | RefusedCertificate {
  const opened = readPkcs12(bundle.pfx, bundle.password);
  if (!opened.ok) return opened;
  const keys = opened.privateKeys.map(keyOf).filter((key): key is KeyObject => key !== undefined);
  if (keys.length === 0) return refused('PfxWithoutKey', 'The .pfx holds no private key.');
  const certificate = certificateOfKey(opened.certificates, keys);
  if (!certificate) return refused('PfxWithoutCertificate', 'The .pfx holds no certificate of its private key.');

  const thumbprint = thumbprintOf(certificate.raw);
  const expected = bundle.expectedThumbprint.trim().toUpperCase();
  if (thumbprint !== expected)
    return refused('ThumbprintMismatch', `The .pfx certificate is ${thumbprint}, not ${expected.slice(0, 128)} as the service said.`);

  const cer = certificateOf(bundle.cer);
  if (!cer) return refused('CerUnreadable', 'The .cer is not an X.509 certificate in DER or PEM.');
  if (thumbprintOf(cer.raw) !== thumbprint) return refused('CerMismatch', `The .cer is ${thumbprintOf(cer.raw)}, not the .pfx certificate ${thumbprint}.`);

  const notBefore = Date.parse(certificate.validFrom);
  const notAfter = Date.parse(certificate.validTo);
  if (Number.isNaN(notBefore) || Number.isNaN(notAfter)) return refused('PfxWithoutCertificate', 'The .pfx certificate has no readable validity period.');
  // RFC 5280 4.1.2.5: valid from notBefore to notAfter, both inclusive.
  if (bundle.now > notAfter) return refused('CertificateExpired', `The certificate expired at ${new Date(notAfter).toISOString()}.`);
  if (bundle.now < notBefore) return refused('CertificateNotYetValid', `The certificate is valid only from ${new Date(notBefore).toISOString()}.`);
  return {
    ok: true,
    thumbprint,
    notBefore: new Date(notBefore).toISOString(),
    expiresAt: new Date(notAfter).toISOString(),
    subject: oneLine(certificate.subject),
    issuer: oneLine(certificate.issuer),
  };
}
