/** The body bytes a handler reads, from real HttpRequest objects as the worker builds them. */
import { HttpRequest } from '@azure/functions';
import { bodyBytesOf } from '../../../src/http/requestBody';

it('reads the body of a request that has one', async () => {
  const request = new HttpRequest({ method: 'PUT', url: 'http://127.0.0.1/api/x', body: { string: '{"a":1}' } });
  expect(Buffer.from(await bodyBytesOf(request)).toString()).toBe('{"a":1}');
});

it('reads nothing from a request without one, a GET or an empty POST', async () => {
  for (const method of ['GET', 'POST']) {
    const request = new HttpRequest({ method, url: 'http://127.0.0.1/api/x' });
    expect(await bodyBytesOf(request)).toEqual(new Uint8Array(0));
  }
});
