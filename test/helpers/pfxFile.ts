/** A .pfx (PKCS#12) holding a new self-signed certificate and its key, as `--cert` takes one. */
import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { selfSignedCertificate } from '../../tools/localHost/httpsCertificate';

export function newPfx(password: string): { pfx: Buffer; fingerprint256: string } {
  const { certPem, keyPem } = selfSignedCertificate(new Date());
  // AES-256 (PBES2), which OpenSSL 3 opens without its legacy provider.
  const asn1 = forge.pkcs12.toPkcs12Asn1(forge.pki.privateKeyFromPem(keyPem), forge.pki.certificateFromPem(certPem), password, { algorithm: 'aes256' });
  return { pfx: Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary'), fingerprint256: new X509Certificate(certPem).fingerprint256 };
}
