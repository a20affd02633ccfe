/**
 * Opens a PKCS#12 file (RFC 7292) with its password and gives what it holds: the private keys
 * (PKCS#8 DER) and the certificates (DER, byte for byte as stored, so a thumbprint taken of them
 * is the certificate's own).
 *
 * node-forge does the PKCS#12 part: the ASN.1 parser, the PKCS#12 key derivation and MAC
 * (RFC 7292 appendix B), and the legacy ciphers pbeWithSHAAnd3-KeyTripleDES-CBC and
 * pbeWithSHAAnd40BitRC2-CBC (what older Windows tooling and `openssl -legacy` write). PBES2
 * (PBKDF2 with AES or 3DES, what current Windows and OpenSSL 3 write) is standard PBKDF2 and
 * CBC, which Node does natively: forge's PBKDF2 is pure JavaScript, 20 times slower.
 * forge's own `pkcs12FromAsn1` is not used, for two reasons: it derives every key with whatever
 * iteration count the file names, synchronously (a count of 2^31 holds the event loop for
 * hours); and it re-encodes the certificates it returns instead of giving their bytes. This
 * walk checks each count against one budget for the whole file before any derivation, and
 * keeps the bytes.
 */
import { createDecipheriv, pbkdf2Sync } from 'node:crypto';
import type * as Forge from 'node-forge';
// forge() loads node-forge with the first certificate check, not at start (src/loading/lazyPackages.ts).
import { forgePackage as forge } from '../loading';

export type Pkcs12Problem = 'PfxUnreadable' | 'PfxPasswordInvalid' | 'PfxTooCostly';

export interface Pkcs12Contents {
  ok: true;
  /** PrivateKeyInfo (PKCS#8) DER of each key. */
  privateKeys: Buffer[];
  /** DER of each X.509 certificate. */
  certificates: Buffer[];
}

export interface Pkcs12Refusal {
  ok: false;
  problem: Pkcs12Problem;
  message: string;
}

/**
 * Most key-derivation rounds one file may cost, all derivations together. Windows and .NET write
 * 2000 per derivation and OpenSSL 2048, and a file has about three (MAC, certificates, key);
 * .NET itself refuses files past 600,000 in all. The costliest round here is forge's PKCS#12
 * derivation (about 1.5 µs), so this bound holds a file to about 0.15 s of the event loop.
 */
export const maxPfxIterations = 100_000;

/** Bags one file may hold: a key, its certificate and a short chain. */
export const maxPfxBags = 32;

/**
 * Key derivations one file may ask for (a MAC and a few encrypted contents and keys), however
 * few rounds each: an encrypted content may hold no bag at all, so bags alone do not bound them.
 */
export const maxPfxDerivations = 8;

/**
 * Longest password and salt a derivation takes: the PKCS#12 derivation costs in proportion to
 * their length as well as to its rounds (a 20 KB password made each take 18 ms). Real ones are
 * tens of characters and 8 to 20 bytes.
 */
export const maxPfxPasswordLength = 256;
export const maxPfxSaltBytes = 64;

const oids = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
};

/** PBKDF2's pseudo-random functions (RFC 8018 appendix B.1), by OID; HMAC-SHA1 when none is named. */
const pbkdf2Digests: Record<string, string> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.8': 'sha224',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};

/** PBES2's encryption schemes (RFC 8018 appendix B.2 and NIST), by OID: Node's cipher and its key length. */
const pbes2Ciphers: Record<string, { name: string; keyBytes: number }> = {
  '2.16.840.1.101.3.4.1.2': { name: 'aes-128-cbc', keyBytes: 16 },
  '2.16.840.1.101.3.4.1.22': { name: 'aes-192-cbc', keyBytes: 24 },
  '2.16.840.1.101.3.4.1.42': { name: 'aes-256-cbc', keyBytes: 32 },
  '1.2.840.113549.3.7': { name: 'des-ede3-cbc', keyBytes: 24 },
};

/** The MAC digests RFC 7292 and its successors use, with their key lengths. */
const macDigests: Record<string, () => { md: Forge.md.MessageDigest; keyBytes: number }> = {
  '1.3.14.3.2.26': () => ({ md: forge().md.sha1.create(), keyBytes: 20 }),
  '2.16.840.1.101.3.4.2.1': () => ({ md: forge().md.sha256.create(), keyBytes: 32 }),
  '2.16.840.1.101.3.4.2.2': () => ({ md: forge().md.sha384.create(), keyBytes: 48 }),
  '2.16.840.1.101.3.4.2.3': () => ({ md: forge().md.sha512.create(), keyBytes: 64 }),
};

/** forge's password-based cipher factory; present at run time, missing from @types/node-forge. */
const pbe = () => (forge().pki as unknown as { pbe: { getCipher(oid: string, params: Forge.asn1.Asn1, password: string): Forge.cipher.BlockCipher } }).pbe;

type Node = Forge.asn1.Asn1;

/** forge's parser takes options its types do not list: the depth bound and kept bit strings. */
const fromDer = () =>
  forge().asn1.fromDer as unknown as (bytes: string, options: { strict: boolean; parseAllBytes: boolean; decodeBitStrings: boolean; maxDepth: number }) => Node;

class Refused extends Error {
  constructor(
    readonly problem: Pkcs12Problem,
    message: string,
  ) {
    super(message);
  }
}

const unreadable = (what: string) => new Refused('PfxUnreadable', `The .pfx is not a readable PKCS#12 file (${what}).`);
const wrongPassword = () => new Refused('PfxPasswordInvalid', 'The .pfx does not decrypt with the secret the service gave.');

/**
 * Parses BER (Windows may write indefinite lengths), refusing a value cut short: forge would
 * otherwise read a truncated file as far as it goes. Bit strings are kept as bytes, so a key is
 * written back exactly as it was read; PKCS#12 nests about ten deep, so deeper is hostile and
 * stops before it costs the stack. What fails to parse after decryption was decrypted with the
 * wrong password: a file without a MAC tells it no other way.
 */
function parse(bytes: string, what: string, decrypted = false): Node {
  try {
    return fromDer()(bytes, { strict: true, parseAllBytes: true, decodeBitStrings: false, maxDepth: 32 });
  } catch {
    if (decrypted) throw wrongPassword();
    throw unreadable(`${what} is not ASN.1`);
  }
}

function children(node: Node | undefined, what: string): Node[] {
  if (!node || !Array.isArray(node.value)) throw unreadable(`${what} is missing`);
  return node.value;
}

function child(node: Node | undefined, index: number, what: string): Node {
  const found = children(node, what)[index];
  if (!found) throw unreadable(`${what} is missing`);
  return found;
}

function oidOf(node: Node | undefined, what: string): string {
  if (!node || node.type !== forge().asn1.Type.OID || typeof node.value !== 'string') throw unreadable(`${what} is not an object identifier`);
  return forge().asn1.derToOid(node.value);
}

/** An OCTET STRING's bytes, also when BER splits it into pieces (as Windows may write it). */
function octetsOf(node: Node | undefined, what: string): string {
  if (!node) throw unreadable(`${what} is missing`);
  if (typeof node.value === 'string') return node.value;
  return node.value.map((piece) => octetsOf(piece, what)).join('');
}

/** A non-negative INTEGER; Infinity when it is too large to be a sensible count. */
function countOf(node: Node | undefined, what: string): number {
  if (!node || node.type !== forge().asn1.Type.INTEGER || typeof node.value !== 'string' || node.value.length === 0)
    throw unreadable(`${what} is not an integer`);
  if (node.value.charCodeAt(0) & 0x80) throw unreadable(`${what} is negative`);
  const digits = node.value.replace(/^\0+/, '');
  return digits.length > 6 ? Infinity : [...digits].reduce((sum, digit) => sum * 256 + digit.charCodeAt(0), 0);
}

const tooCostly = (what: string) => new Refused('PfxTooCostly', `The .pfx asks for ${what}; it is refused before deriving.`);

/** What key derivation the rest of the file may still cost: rounds, derivations, and the size of each. */
class DerivationBudget {
  #roundsLeft = maxPfxIterations;
  #derivationsLeft = maxPfxDerivations;

  spend(count: number, salt: string): void {
    if (!(count >= 1)) throw unreadable('an iteration count below 1');
    if (count > this.#roundsLeft) throw tooCostly(`more than ${maxPfxIterations} key-derivation rounds in all`);
    if (this.#derivationsLeft === 0) throw tooCostly(`more than ${maxPfxDerivations} key derivations`);
    if (salt.length > maxPfxSaltBytes) throw tooCostly(`a salt longer than ${maxPfxSaltBytes} bytes`);
    this.#roundsLeft -= count;
    this.#derivationsLeft -= 1;
  }
}

interface Opening {
  password: string;
  budget: DerivationBudget;
  bags: number;
  contents: Pkcs12Contents;
}

/**
 * PBES2 (RFC 8018 section 6.2): PBKDF2 over the password's UTF-8 (what Windows, .NET and OpenSSL
 * give it), then the CBC cipher the parameters name, natively.
 */
function decryptPbes2(params: Node, encrypted: string, opening: Opening): string {
  const kdf = child(params, 0, 'the PBES2 key derivation');
  if (oidOf(child(kdf, 0, 'the PBES2 key derivation'), 'the PBES2 key derivation') !== oids.pbkdf2)
    throw unreadable('a PBES2 key derivation other than PBKDF2');
  const kdfParams = children(kdf, 'the PBKDF2 parameters')[1];
  const [salt, count, ...rest] = children(kdfParams, 'the PBKDF2 parameters');
  // Optional keyLength INTEGER, then optional prf AlgorithmIdentifier (default HMAC-SHA1).
  const prf = rest.find((item) => item.type === forge().asn1.Type.SEQUENCE);
  const digest = prf ? pbkdf2Digests[oidOf(child(prf, 0, 'the PBKDF2 function'), 'the PBKDF2 function')] : 'sha1';
  const scheme = child(params, 1, 'the PBES2 encryption');
  const cipher = pbes2Ciphers[oidOf(child(scheme, 0, 'the PBES2 encryption'), 'the PBES2 encryption')];
  if (!digest || !cipher) throw unreadable('a PBES2 function or cipher that is not supported');
  const iterations = countOf(count, 'the PBKDF2 iteration count');
  const saltBytes = octetsOf(salt, 'the PBKDF2 salt');
  opening.budget.spend(iterations, saltBytes);
  const key = pbkdf2Sync(Buffer.from(opening.password, 'utf8'), Buffer.from(saltBytes, 'binary'), iterations, cipher.keyBytes, digest);
  try {
    const decipher = createDecipheriv(cipher.name, key, Buffer.from(octetsOf(child(scheme, 1, 'the PBES2 IV'), 'the PBES2 IV'), 'binary'));
    return Buffer.concat([decipher.update(Buffer.from(encrypted, 'binary')), decipher.final()]).toString('binary');
  } catch {
    // A wrong key ends in bad padding (or, rarely, an IV of the wrong length: unreadable either way).
    throw wrongPassword();
  }
}

/**
 * The PKCS#12 schemes (RFC 7292 appendix C), forge's: they take the password as a BMPString
 * (appendix B.1), which forge writes from the string's UTF-16 code units.
 */
function decryptPkcs12Pbe(algorithm: string, params: Node, encrypted: string, opening: Opening): string {
  opening.budget.spend(
    countOf(child(params, 1, 'the PBE iteration count'), 'the PBE iteration count'),
    octetsOf(child(params, 0, 'the PBE salt'), 'the PBE salt'),
  );
  let cipher: Forge.cipher.BlockCipher;
  try {
    cipher = pbe().getCipher(algorithm, params, opening.password);
  } catch {
    throw unreadable(`an encryption of OID ${algorithm.slice(0, 64)} that is not supported`);
  }
  cipher.update(forge().util.createBuffer(encrypted));
  if (!cipher.finish()) throw wrongPassword();
  return cipher.output.getBytes();
}

/** Decrypts with a password-based AlgorithmIdentifier, its iteration count checked first. */
function decrypt(algorithmIdentifier: Node, encrypted: string, opening: Opening): string {
  const algorithm = oidOf(child(algorithmIdentifier, 0, 'an encryption algorithm'), 'an encryption algorithm');
  const params = child(algorithmIdentifier, 1, 'the encryption parameters');
  return algorithm === oids.pbes2 ? decryptPbes2(params, encrypted, opening) : decryptPkcs12Pbe(algorithm, params, encrypted, opening);
}

/** Checks the MAC over the authenticated safe (RFC 7292 section 5): a wrong password fails here. */
function verifyMac(macData: Node, authSafe: string, opening: Opening): void {
  const digestInfo = child(macData, 0, 'the MAC');
  const algorithm = oidOf(child(child(digestInfo, 0, 'the MAC algorithm'), 0, 'the MAC algorithm'), 'the MAC algorithm');
  const digest = macDigests[algorithm]?.();
  if (!digest) throw unreadable(`a MAC algorithm of OID ${algorithm.slice(0, 64)} that is not supported`);
  const iterationsNode = children(macData, 'the MAC data')[2];
  // RFC 7292: iterations INTEGER DEFAULT 1.
  const iterations = iterationsNode ? countOf(iterationsNode, 'the MAC iteration count') : 1;
  const saltBytes = octetsOf(child(macData, 1, 'the MAC salt'), 'the MAC salt');
  opening.budget.spend(iterations, saltBytes);
  const salt = forge().util.createBuffer(saltBytes);
  const key = forge().pkcs12.generateKey(opening.password, salt, 3, iterations, digest.keyBytes, digest.md);
  const hmac = forge().hmac.create();
  hmac.start(digest.md, key);
  hmac.update(authSafe);
  if (hmac.digest().getBytes() !== octetsOf(child(digestInfo, 1, 'the MAC value'), 'the MAC value')) {
    throw new Refused('PfxPasswordInvalid', 'The .pfx does not open with the secret the service gave (its MAC does not match).');
  }
}

function readSafeContents(bytes: string, opening: Opening, decrypted: boolean): void {
  for (const bag of children(parse(bytes, 'the safe contents', decrypted), 'the safe contents')) {
    opening.bags += 1;
    if (opening.bags > maxPfxBags) throw unreadable(`more than ${maxPfxBags} bags`);
    const type = oidOf(child(bag, 0, 'a bag type'), 'a bag type');
    const value = child(child(bag, 1, 'a bag value'), 0, 'a bag value');
    if (type === oids.keyBag) {
      opening.contents.privateKeys.push(Buffer.from(forge().asn1.toDer(value).getBytes(), 'binary'));
    } else if (type === oids.shroudedKeyBag) {
      const encrypted = octetsOf(child(value, 1, 'an encrypted key'), 'an encrypted key');
      opening.contents.privateKeys.push(Buffer.from(decrypt(child(value, 0, 'a key encryption'), encrypted, opening), 'binary'));
    } else if (type === oids.certBag && oidOf(child(value, 0, 'a certificate type'), 'a certificate type') === oids.x509Certificate) {
      opening.contents.certificates.push(Buffer.from(octetsOf(child(child(value, 1, 'a certificate'), 0, 'a certificate'), 'a certificate'), 'binary'));
    }
    // Other bags (CRLs, secrets, attributes-only) carry nothing the check needs.
  }
}

function readContentInfo(contentInfo: Node, opening: Opening): void {
  const type = oidOf(child(contentInfo, 0, 'a content type'), 'a content type');
  const content = child(child(contentInfo, 1, 'a content'), 0, 'a content');
  if (type === oids.data) return readSafeContents(octetsOf(content, 'a content'), opening, false);
  if (type !== oids.encryptedData) throw unreadable(`a content of OID ${type.slice(0, 64)} that is not supported`);
  // EncryptedData ::= SEQUENCE { version, EncryptedContentInfo ::= SEQUENCE { contentType, algorithm, [0] IMPLICIT encryptedContent } }
  const encryptedContentInfo = child(content, 1, 'the encrypted content');
  const encrypted = octetsOf(child(encryptedContentInfo, 2, 'the encrypted content'), 'the encrypted content');
  readSafeContents(decrypt(child(encryptedContentInfo, 1, 'the content encryption'), encrypted, opening), opening, true);
}

export function readPkcs12(pfx: Buffer, password: string): Pkcs12Contents | Pkcs12Refusal {
  const opening: Opening = { password, budget: new DerivationBudget(), bags: 0, contents: { ok: true, privateKeys: [], certificates: [] } };
  try {
    if (password.length > maxPfxPasswordLength) throw tooCostly(`a password longer than ${maxPfxPasswordLength} characters`);
    // PFX ::= SEQUENCE { version INTEGER (3), authSafe ContentInfo, macData MacData OPTIONAL }
    const pfxNode = parse(pfx.toString('binary'), 'the file');
    if (countOf(child(pfxNode, 0, 'the version'), 'the version') !== 3) throw unreadable('a version other than 3');
    const authSafeInfo = child(pfxNode, 1, 'the authenticated safe');
    // Public-key integrity mode (a signed authSafe) is not what password-protected files use.
    if (oidOf(child(authSafeInfo, 0, 'the authenticated safe type'), 'the authenticated safe type') !== oids.data)
      throw unreadable('an authenticated safe that is not password-protected data');
    const authSafe = octetsOf(child(child(authSafeInfo, 1, 'the authenticated safe'), 0, 'the authenticated safe'), 'the authenticated safe');
    const macData = children(pfxNode, 'the file')[2];
    if (macData) verifyMac(macData, authSafe, opening);
    for (const contentInfo of children(parse(authSafe, 'the authenticated safe'), 'the authenticated safe')) readContentInfo(contentInfo, opening);
    return opening.contents;
  } catch (error) {
    if (error instanceof Refused) return { ok: false, problem: error.problem, message: error.message };
    // Anything else forge or a hostile structure throws (a stack overflow on deep nesting included).
    return { ok: false, problem: 'PfxUnreadable', message: 'The .pfx is not a readable PKCS#12 file.' };
  }
}
