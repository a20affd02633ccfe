/** A .pfx (PKCS#12) holding a new self-signed certificate and (unless told) its key, as `--cert` takes one. */
import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { selfSignedCertificate } from '../../tools/localHost/httpsCertificate';

export function newPfx(password: string, options: { madeAt?: Date; withoutKey?: boolean } = {}): { pfx: Buffer; fingerprint256: string } {
  // Valid for a year from `madeAt` (an hour before it, too).
  const { certPem, keyPem } = selfSignedCertificate(options.madeAt ?? new Date());
  // AES-256 (PBES2), which OpenSSL 3 opens without its legacy provider.
  const key = options.withoutKey ? null : forge.pki.privateKeyFromPem(keyPem);
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, forge.pki.certificateFromPem(certPem), password, { algorithm: 'aes256' });
  return { pfx: Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary'), fingerprint256: new X509Certificate(certPem).fingerprint256 };
}
