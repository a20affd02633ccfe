/**
 * Real certificate bundles for the emulator's download (Doc 3, D): a zip holding a .pfx encrypted
 * with a fresh password and the matching .cer, so every test and `npm start` run the gateway's
 * real check. Built with node-forge, the library the gateway reads them with, except for the two
 * costly steps, which Node does natively: the RSA key pair (one per process) and the
 * certificate's signature. A bundle then costs a few tens of milliseconds, most of it forge's
 * PKCS#12 key derivation at the usual 2048 rounds.
 *
 * A fault makes the bundle a careful operator must refuse, one per refusal code.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { zipSync } from 'fflate';
import forge from 'node-forge';

export type BundleFault = 'wrong-password' | 'wrong-thumbprint' | 'mismatched-cer' | 'unreadable-cer' | 'without-key' | 'expired' | 'not-yet-valid';

export interface CertificateBundleOptions {
  fault?: BundleFault;
  /** PBES2 with AES-256 (current Windows and OpenSSL), or the legacy 3DES (older Windows tooling). */
  encryption?: 'aes256' | '3des';
  /** Days from now to the certificate's notAfter (default 180). */
  validForDays?: number;
  /** A PEM .cer instead of DER. */
  pemCer?: boolean;
}

export interface CertificateBundle {
  zip: Buffer;
  /** The two files the zip holds. */
  pfx: Buffer;
  cer: Buffer;
  filename: string;
  /** The .pfx password, and its base64 as the service answers it. */
  password: string;
  secretEncoded: string;
  /** What the answer says: `CertificateThumbprint`, and the expiry. */
  thumbprint: string;
  notAfter: Date;
}

const day = 24 * 3600_000;

interface KeyPair {
  privateKey: KeyObject;
  forgePrivateKey: forge.pki.rsa.PrivateKey;
  forgePublicKey: forge.pki.rsa.PublicKey;
}

let keyPair: KeyPair | undefined;

/** One RSA key pair per process: generating one costs a few hundred milliseconds. */
function processKeyPair(): KeyPair {
  if (!keyPair) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    keyPair = {
      privateKey,
      forgePrivateKey: forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()),
      forgePublicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()) as forge.pki.rsa.PublicKey,
    };
  }
  return keyPair;
}

/** forge's to-be-signed part of a certificate; present at run time, missing from @types/node-forge. */
const { getTBSCertificate } = forge.pki as unknown as { getTBSCertificate(certificate: forge.pki.Certificate): forge.asn1.Asn1 };

/** A self-signed certificate, as the lifecycle service issues for test automation; signed natively. */
function selfSignedCertificate(commonName: string, notBefore: Date, notAfter: Date): forge.pki.Certificate {
  const keys = processKeyPair();
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = keys.forgePublicKey;
  // A positive serial of 16 random bytes: every bundle is a new certificate with its own thumbprint.
  certificate.serialNumber = `01${randomBytes(15).toString('hex')}`;
  certificate.validity.notBefore = notBefore;
  certificate.validity.notAfter = notAfter;
  const name = [{ name: 'commonName', value: commonName }];
  certificate.setSubject(name);
  certificate.setIssuer(name);
  certificate.siginfo.algorithmOid = certificate.signatureOid = forge.pki.oids.sha256WithRSAEncryption!;
  const tbs = getTBSCertificate(certificate);
  certificate.signature = sign('sha256', Buffer.from(forge.asn1.toDer(tbs).getBytes(), 'binary'), keys.privateKey).toString('binary');
  return certificate;
}

const derOf = (certificate: forge.pki.Certificate) => Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(certificate)).getBytes(), 'binary');

function pfxOf(certificate: forge.pki.Certificate, password: string, options: CertificateBundleOptions): Buffer {
  const key = options.fault === 'without-key' ? null : processKeyPair().forgePrivateKey;
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, certificate, password, { algorithm: options.encryption ?? 'aes256', friendlyName: 'RSAT' });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}

/** A bundle for `name` at `now`, the right one or the one a fault asks for. */
export function makeCertificateBundle(name: string, now: number, options: CertificateBundleOptions = {}): CertificateBundle {
  const validity: Record<string, [number, number]> = {
    expired: [now - 400 * day, now - day],
    'not-yet-valid': [now + day, now + 365 * day],
  };
  const [notBefore, notAfter] = validity[options.fault ?? ''] ?? [now - day, now + (options.validForDays ?? 180) * day];
  const certificate = selfSignedCertificate(`RSAT ${name}`, new Date(notBefore), new Date(notAfter));
  const other = () => derOf(selfSignedCertificate(`RSAT ${name} (another)`, new Date(notBefore), new Date(notAfter)));
  const cerDer = options.fault === 'mismatched-cer' ? other() : options.fault === 'unreadable-cer' ? randomBytes(256) : derOf(certificate);
  const cer = options.pemCer ? Buffer.from(forge.pem.encode({ type: 'CERTIFICATE', body: cerDer.toString('binary') })) : cerDer;

  const password = randomBytes(15).toString('base64url');
  const pfx = pfxOf(certificate, options.fault === 'wrong-password' ? `${password}-not-this-one` : password, options);
  const thumbprintDer = options.fault === 'wrong-thumbprint' ? other() : derOf(certificate);
  const zip = Buffer.from(zipSync({ [`${name}.pfx`]: pfx, [`${name}.cer`]: cer }));
  return {
    zip,
    pfx,
    cer,
    filename: `${name}.zip`,
    password,
    secretEncoded: Buffer.from(password, 'utf8').toString('base64'),
    thumbprint: createHash('sha1').update(thumbprintDer).digest('hex').toUpperCase(),
    notAfter: new Date(notAfter),
  };
}
