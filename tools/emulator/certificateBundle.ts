/**
 * Real certificate bundles for the emulator's download: a zip holding a .pfx encrypted
 * with a fresh password and the matching .cer, so every test and `npm start` run the gateway's
 * real check. The certificate and the PKCS#12 structure are built with node-forge, the costly
 * steps natively: the RSA key pair (one per process), the certificate's signature, and the
 * key's PBES2 encryption (PBKDF2-HMAC-SHA256, 2048 rounds, AES-256-CBC: what OpenSSL 3 and
 * current Windows write). A bundle then costs a few milliseconds, so the bench can download a
 * hundred. The legacy encryption (3DES key, as older Windows tooling writes) is forge's own
 * writer, slower, and made only when asked for.
 *
 * A fault makes the bundle a careful operator must refuse, one per refusal code.
 */
import { createHash, createHmac, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
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

const { asn1 } = forge;
const universal = (type: number, value: string | forge.asn1.Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, type, Array.isArray(value), value);
const sequence = (...items: forge.asn1.Asn1[]) => universal(asn1.Type.SEQUENCE, items);
const oid = (id: string) => universal(asn1.Type.OID, asn1.oidToDer(id).getBytes());
const octets = (bytes: Buffer) => universal(asn1.Type.OCTETSTRING, bytes.toString('binary'));
const integer = (value: number) => universal(asn1.Type.INTEGER, asn1.integerToDer(value).getBytes());
const explicit = (item: forge.asn1.Asn1) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [item]);
const encoded = (node: forge.asn1.Asn1) => Buffer.from(asn1.toDer(node).getBytes(), 'binary');
/** ContentInfo of type data (RFC 7292 section 4.1). */
const dataContent = (content: Buffer) => sequence(oid('1.2.840.113549.1.7.1'), explicit(octets(content)));
const macRounds = 2048;

/**
 * PFX ::= SEQUENCE { version 3, authSafe, macData } (RFC 7292 section 4): the certificate bag and
 * the shrouded key bag each in a data ContentInfo, as OpenSSL lays them out, under a SHA-256 MAC.
 */
function modernPfx(certificate: Buffer, password: string, withKey: boolean): Buffer {
  const certificateBag = sequence(oid('1.2.840.113549.1.12.10.1.3'), explicit(sequence(oid('1.2.840.113549.1.9.22.1'), explicit(octets(certificate)))));
  const bags = [certificateBag];
  if (withKey) {
    const encryptedKey = processKeyPair().privateKey.export({ format: 'der', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: password });
    bags.push(sequence(oid('1.2.840.113549.1.12.10.1.2'), explicit(asn1.fromDer(encryptedKey.toString('binary')))));
  }
  const authSafe = encoded(sequence(...bags.map((bag) => dataContent(encoded(sequence(bag))))));
  const salt = randomBytes(8);
  const macKey = forge.pkcs12.generateKey(password, forge.util.createBuffer(salt.toString('binary')), 3, macRounds, 32, forge.md.sha256.create());
  const mac = createHmac('sha256', Buffer.from(macKey.getBytes(), 'binary')).update(authSafe).digest();
  const digestInfo = sequence(sequence(oid('2.16.840.1.101.3.4.2.1'), universal(asn1.Type.NULL, '')), octets(mac));
  return encoded(sequence(integer(3), dataContent(authSafe), sequence(digestInfo, octets(salt), integer(macRounds))));
}

function pfxOf(certificate: forge.pki.Certificate, password: string, options: CertificateBundleOptions): Buffer {
  const withKey = options.fault !== 'without-key';
  if (options.encryption !== '3des') return modernPfx(derOf(certificate), password, withKey);
  const asn1Pfx = forge.pkcs12.toPkcs12Asn1(withKey ? processKeyPair().forgePrivateKey : null, certificate, password, {
    algorithm: '3des',
    friendlyName: 'RSAT',
  });
  return encoded(asn1Pfx);
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
