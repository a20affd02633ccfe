/** The one rule every link the app hands out is built on. */
import { appBaseOf } from '../../../src/http/appBase';

describe('appBaseOf', () => {
  it.each([
    ['the request as the host presents it', 'https://127.0.0.1:7071/api/operations/abc', 'operations/abc', undefined, 'https://127.0.0.1:7071/api'],
    ['plain HTTP stays plain', 'http://localhost:7071/api/orchestrations', 'orchestrations', undefined, 'http://localhost:7071/api'],
    ['another route prefix', 'https://app.azurewebsites.net/gw/v1/orchestrations/x', 'orchestrations/x', undefined, 'https://app.azurewebsites.net/gw/v1'],
    ['an empty route prefix', 'https://app.azurewebsites.net/orchestrations/x', 'orchestrations/x', undefined, 'https://app.azurewebsites.net'],
    ['the own path in another case', 'https://h/api/Subscriptions/S/providers/x', 'subscriptions/s/providers/x', undefined, 'https://h/api'],
    ['APP_PUBLIC_URL over the request', 'http://10.0.0.4:80/api/operations/abc', 'operations/abc', 'https://gw.contoso.com/api', 'https://gw.contoso.com/api'],
    ['APP_PUBLIC_URL with a path of its own', 'https://app.azurewebsites.net/api/x', 'x', 'https://contoso.com/gateway/api', 'https://contoso.com/gateway/api'],
  ])('%s', (_title, requestUrl, ownPath, publicUrl, expected) => {
    expect(appBaseOf(requestUrl, ownPath, publicUrl)).toBe(expected);
  });
});
