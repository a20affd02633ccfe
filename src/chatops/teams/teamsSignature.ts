/** An outgoing webhook's signature (`Authorization: HMAC …`), see ../requestSignatures.ts. */
import { createHmac } from 'node:crypto';
import { sameText, type SignatureVerdict } from '../requestSignatures';

/** Teams' signature of a request: what follows `HMAC ` in its `Authorization` header. */
export function teamsSignatureOf(base64Secret: string, body: Buffer | string): string {
  return createHmac('sha256', Buffer.from(base64Secret, 'base64')).update(body).digest('base64');
}

export function verifyTeamsRequest(base64Secret: string, authorization: string | null, body: Buffer): SignatureVerdict {
  const match = authorization ? /^HMAC ([A-Za-z0-9+/]{1,128}={0,2})$/.exec(authorization.trim()) : null;
  if (!match) return { ok: false, reason: 'missing' };
  return sameText(match[1]!, teamsSignatureOf(base64Secret, body)) ? { ok: true, signature: match[1]! } : { ok: false, reason: 'mismatch' };
}
