/**
 * The platforms' signatures, checked against values computed here from their documented recipes
 * (Slack: hex HMAC-SHA256 of `v0:<timestamp>:<body>`; Teams: base64 HMAC-SHA256 of the body with
 * the base64-decoded token), and the replay cache's bounds.
 */
import { createHmac } from 'node:crypto';
import { ReplayCache } from '../../../src/chatops/requestSignatures';
import { verifySlackRequest } from '../../../src/chatops/slack/slackSignature';
import { verifyTeamsRequest } from '../../../src/chatops/teams/teamsSignature';

const slackSecret = '8f742231b10e8888abcd99yyyzzz85a5';
const body = Buffer.from('token=x&team_id=T1&user_id=U1&command=%2Fgw&text=help');
const nowMs = 1_700_000_000_000;
const timestamp = String(nowMs / 1000);
const slackSigned = `v0=${createHmac('sha256', slackSecret).update(`v0:${timestamp}:${body.toString()}`).digest('hex')}`;

describe('verifySlackRequest', () => {
  const check = (headers: { timestamp: string | null; signature: string | null }, at = nowMs, payload = body) =>
    verifySlackRequest(slackSecret, headers, payload, at, 300);

  it('accepts the documented signature', () => {
    expect(check({ timestamp, signature: slackSigned })).toEqual({ ok: true, signature: slackSigned });
  });
  it.each([
    ['no signature', { timestamp, signature: null }, 'missing'],
    ['no timestamp', { timestamp: null, signature: slackSigned }, 'missing'],
    ['a timestamp that is no number', { timestamp: '17e8', signature: slackSigned }, 'missing'],
    ['another secret', { timestamp, signature: `v0=${createHmac('sha256', 'other').update(`v0:${timestamp}:${body.toString()}`).digest('hex')}` }, 'mismatch'],
    ['a signature of another length', { timestamp, signature: 'v0=abc' }, 'mismatch'],
  ])('refuses %s', (_name, headers, reason) => {
    expect(check(headers)).toEqual({ ok: false, reason });
  });
  it('refuses a changed body', () => {
    expect(check({ timestamp, signature: slackSigned }, nowMs, Buffer.from(`${body.toString()}x`))).toEqual({ ok: false, reason: 'mismatch' });
  });
  it('refuses a timestamp more than the tolerance away, either side, and accepts one at its edge', () => {
    expect(check({ timestamp, signature: slackSigned }, nowMs + 301_000)).toEqual({ ok: false, reason: 'stale' });
    expect(check({ timestamp, signature: slackSigned }, nowMs - 301_000)).toEqual({ ok: false, reason: 'stale' });
    expect(check({ timestamp, signature: slackSigned }, nowMs + 300_000).ok).toBe(true);
  });
});

describe('verifyTeamsRequest', () => {
  const token = Buffer.from('a security token of thirty-two b').toString('base64');
  const activity = Buffer.from(JSON.stringify({ type: 'message', text: '<at>gw</at> help' }));
  const signed = `HMAC ${createHmac('sha256', Buffer.from(token, 'base64')).update(activity).digest('base64')}`;

  it('accepts the documented signature', () => {
    expect(verifyTeamsRequest(token, signed, activity).ok).toBe(true);
  });
  it.each([
    ['no header', null, 'missing'],
    ['another scheme', signed.replace('HMAC', 'Bearer'), 'missing'],
    ['a signature keyed with the token as text', `HMAC ${createHmac('sha256', token).update(activity).digest('base64')}`, 'mismatch'],
  ])('refuses %s', (_name, header, reason) => {
    expect(verifyTeamsRequest(token, header, activity)).toEqual({ ok: false, reason });
  });
});

describe('ReplayCache', () => {
  it('accepts a signature once within its time, and again after', () => {
    const cache = new ReplayCache(10, 1000);
    expect(cache.firstUse('a', 0)).toBe(true);
    expect(cache.firstUse('a', 999)).toBe(false);
    expect(cache.firstUse('a', 1000)).toBe(true);
  });
  it('holds at most its bound, forgetting the oldest', () => {
    const cache = new ReplayCache(3, 60_000);
    for (const signature of ['a', 'b', 'c', 'd']) cache.firstUse(signature, 0);
    expect(cache.size).toBe(3);
    expect(cache.firstUse('d', 1)).toBe(false);
    expect(cache.firstUse('a', 1)).toBe(true);
  });
});
