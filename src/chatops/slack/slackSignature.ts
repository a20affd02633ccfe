/** Slack's request signature ("Verifying requests from Slack"), see ../requestSignatures.ts. */
import { createHmac } from 'node:crypto';
import { sameText, type SignatureVerdict } from '../requestSignatures';

/** Slack's signature of a request: what Slack sends in `X-Slack-Signature` (and `npm run chat` signs with). */
export function slackSignatureOf(secret: string, timestamp: string, body: Buffer | string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex')}`;
}

export function verifySlackRequest(
  secret: string,
  headers: { timestamp: string | null; signature: string | null },
  body: Buffer,
  nowMs: number,
  toleranceSeconds: number,
): SignatureVerdict {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'missing' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceSeconds) return { ok: false, reason: 'stale' };
  return sameText(signature, slackSignatureOf(secret, timestamp, body)) ? { ok: true, signature } : { ok: false, reason: 'mismatch' };
}
