/**
 * A bad setting is named, and nothing of its value is repeated: a JSON setting may hold keys or
 * secrets, and JSON.parse's and zod's own messages quote the text. Every setting the app reads,
 * and the local host's LOCAL_HOST_KEYS, is given each malformed value below.
 */
import { ConfigError, parseConfig, settingNames } from '../../src/settings/config';
import { parseLocalHostKeys } from '../../tools/localHostKeys';

const secret = 'h2zqxv-v7q';
const malformed = [
  `{"master": "${secret}`,
  `{"master": "${secret}"}`,
  `["${secret}"]`,
  `[{"${secret}": "${secret}"}]`,
  `{"${secret}": "${secret}"}`,
  `[{"callers": ["${secret}"], "allow": ["${secret}"], "${secret}": 1}]`,
  `'${secret}'`,
];
const minimal = { MANAGEMENT_BASE_URL: 'https://management.example.com', LIFECYCLE_BASE_URL: 'https://lcs.example.com' };

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

describe.each(settingNames.map((name) => [name]))('%s given a malformed value', (name) => {
  it.each(malformed.map((value) => [value]))('%s: repeats nothing of the value', (value) => {
    const message = messageOf(() => parseConfig({ ...minimal, [name]: value }));
    expect(message).not.toContain('zqxv');
    expect(message).not.toContain('v7q');
  });
});

describe('the JSON settings', () => {
  it.each(['ALLOWED_SCOPES', 'ACCESS_POLICY', 'CERT_ENVIRONMENTS', 'LRO_DEADLINE_MINUTES', 'NOTIFY_ALLOWED_ORIGINS'])(
    '%s refuses every malformed value, naming itself',
    (name) => {
      for (const value of malformed) {
        let caught: unknown;
        try {
          parseConfig({ ...minimal, [name]: value });
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(ConfigError);
        expect((caught as ConfigError).problems.every((problem) => problem.startsWith(`${name} `))).toBe(true);
      }
    },
  );
});

describe('LOCAL_HOST_KEYS', () => {
  it.each(malformed.map((value) => [value]))('%s: names the setting, repeats nothing of the value', (value) => {
    const message = messageOf(() => parseLocalHostKeys(value));
    expect(message).toMatch(/^LOCAL_HOST_KEYS (is not valid JSON|must be)/);
    expect(message).not.toContain('zqxv');
    expect(message).not.toContain('v7q');
  });

  it('reads a well-formed object of keys', () => {
    expect(parseLocalHostKeys('{"default":"0123456789abcdef"}')).toEqual({ default: '0123456789abcdef' });
    expect(parseLocalHostKeys(undefined)).toBeUndefined();
  });
});
