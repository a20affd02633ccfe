/**
 * The receivers the local tools start (the trace viewer of `npm start -- --traces`, the chat
 * stand-in of `npm run chat`) hold what their limits allow and no more: a request's body up to its
 * limit (a larger one is cut off unread), the traces held and the posts kept up to their counts.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startChatStandIn } from '../../../tools/chatStandIn';
import { startTraceViewer } from '../../../tools/traceViewer';

/** POSTs `body`; resolves with the status, or the error's code when the receiver cut it off. */
function post(url: string, body: string): Promise<number | string> {
  return new Promise((resolve) => {
    const sent = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    sent.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    sent.end(body);
  });
}

/** An OTLP/JSON export of one client span (not where work begins, so its trace is held). */
const exportOf = (traceId: string, name: string) =>
  JSON.stringify({
    resourceSpans: [
      { scopeSpans: [{ spans: [{ traceId, spanId: traceId.slice(0, 16), name, kind: 3, startTimeUnixNano: '1000000000', endTimeUnixNano: '2000000000' }] }] },
    ],
  });

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  await new Promise((closed) => server.close(closed));
  return port;
}

describe('the trace viewer', () => {
  it('holds at most maxTraces traces: the oldest is printed when one more arrives', async () => {
    const printed: string[] = [];
    const viewer = await startTraceViewer((text) => printed.push(text), { holdMs: 60_000, maxTraces: 2 });
    try {
      for (const [index, name] of ['first-span', 'second-span'].entries())
        expect(await post(`${viewer.url}/v1/traces`, exportOf(`${index}`.repeat(32), name))).toBe(200);
      expect(printed).toEqual([]);
      expect(await post(`${viewer.url}/v1/traces`, exportOf('2'.repeat(32), 'third-span'))).toBe(200);
      expect(printed).toEqual([expect.stringContaining('first-span')]);
    } finally {
      await viewer.close();
    }
  });

  it('cuts off an export larger than maxBodyBytes, reading none of it', async () => {
    const printed: string[] = [];
    const viewer = await startTraceViewer((text) => printed.push(text), { maxBodyBytes: 1024 });
    try {
      expect(await post(`${viewer.url}/v1/traces`, exportOf('a'.repeat(32), 'x'.repeat(2048)))).not.toBe(200);
      expect(await post(`${viewer.url}/v1/traces`, exportOf('b'.repeat(32), 'small-span'))).toBe(200);
    } finally {
      await viewer.close();
    }
    expect(printed.join('')).not.toContain('xxxx');
    expect(printed.join('')).toContain('small-span');
  });
});

describe('the chat stand-in', () => {
  it('keeps the latest maxPosts posts and cuts off a body larger than maxBodyBytes', async () => {
    const address = new URL(`http://127.0.0.1:${await freePort()}`);
    const standIn = await startChatStandIn(address, { maxBodyBytes: 1024, maxPosts: 2 });
    try {
      for (const text of ['one', 'two', 'three']) expect(await post(`${address.href}post`, JSON.stringify({ text }))).toBe(200);
      expect(await post(`${address.href}post`, JSON.stringify({ text: 'y'.repeat(2048) }))).not.toBe(200);
      expect(await standIn.nextPost((post) => post.text === 'one', 50)).toBeUndefined();
      expect(await standIn.nextPost((post) => post.text === 'three', 50)).toMatchObject({ text: 'three' });
      expect(await standIn.nextPost((post) => post.text.startsWith('y'), 50)).toBeUndefined();
    } finally {
      await standIn.close();
    }
  });
});
