/**
 * What an upstream span records of a URL: the path and `api-version` as sent, every other
 * query value replaced (a nextLink may carry a skip token, a SAS signature or a key).
 */
import { recordedUrlOf } from '../../../src/telemetry/spans';

describe('recordedUrlOf', () => {
  it('keeps the path and api-version, and replaces every other value', () => {
    expect(
      recordedUrlOf('https://management.azure.com', '/subscriptions/s/providers/P/x?api-version=2025-09-01&$skiptoken=CANARY-SECRET-a&sig=CANARY-SECRET-b'),
    ).toBe('https://management.azure.com/subscriptions/s/providers/P/x?api-version=2025-09-01&$skiptoken=REDACTED&sig=REDACTED');
  });

  it('replaces a value whatever the case of its name, and keeps API-Version in any case', () => {
    expect(recordedUrlOf('https://h', '/p?API-Version=1&Code=CANARY-SECRET-c&flag')).toBe('https://h/p?API-Version=1&Code=REDACTED&flag=REDACTED');
  });

  it('keeps a lone api-version, and replaces a lone value of any other name', () => {
    expect(recordedUrlOf('https://h', '/p?api-version=2025-09-01')).toBe('https://h/p?api-version=2025-09-01');
    expect(recordedUrlOf('https://h', '/p?api-version-sig=CANARY-SECRET-d')).toBe('https://h/p?api-version-sig=REDACTED');
    expect(recordedUrlOf('https://h', '/p?sig=CANARY-SECRET-e')).toBe('https://h/p?sig=REDACTED');
    expect(recordedUrlOf('https://h', '/p?api-version')).toBe('https://h/p?api-version');
  });

  it('gives a URL without a query as it is', () => {
    expect(recordedUrlOf('https://h:8443', '/a/b')).toBe('https://h:8443/a/b');
  });
});
