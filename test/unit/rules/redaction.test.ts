/** Secrets are replaced wherever they sit; every other field stays as it was. */
import { redactSecrets, sanitizeText } from '../../../src/rules/redaction';

describe('redactSecrets', () => {
  it('replaces the spec’s secret fields at any depth and keeps the rest', () => {
    const group = {
      properties: {
        containers: [{ name: 'web', properties: { environmentVariables: [{ name: 'A', value: 'visible', secureValue: 's1' }] } }],
        volumes: [{ name: 'v', cloudFile: { shareName: 'share', storageAccountKey: 's2' }, secret: { file: 's3' } }],
        imageRegistryCredentials: [{ server: 'r.example', username: 'u', password: 's4' }],
        extensions: [{ name: 'x', properties: { settings: { a: 1 }, protectedSettings: { b: 's5' } } }],
        diagnostics: { logAnalytics: { workspaceId: 'w', workspaceKey: 's6' } },
      },
      error: { code: 'KeptAsIs' },
      Data: { CertificateSecretEncoded: 's7', CertificateThumbprint: 'ABC' },
    };
    const redacted = JSON.stringify(redactSecrets(group));
    for (const secret of ['s1', 's2', 's3', 's4', 's5', 's6', 's7']) expect(redacted).not.toContain(`"${secret}"`);
    for (const kept of ['visible', 'share', 'r.example', 'KeptAsIs', 'ABC', 'workspaceId']) expect(redacted).toContain(kept);
  });

  it('leaves empty secret fields as they are: there is nothing to hide', () => {
    expect(redactSecrets({ volumes: [{ name: 'v', secret: {} }], password: '' })).toEqual({ volumes: [{ name: 'v', secret: {} }], password: '' });
  });
});

describe('sanitizeText', () => {
  it('drops bearer tokens, JWTs and query strings from free text', () => {
    const text = sanitizeText('failed GET https://m.example/x?code=abc&sig=zzz with Bearer abc.def and eyJhbGciOi.eyJzdWIiOi.sig');
    expect(text).not.toMatch(/code=abc|sig=zzz|abc\.def|eyJhbGciOi/);
    expect(text).toContain('https://m.example/x?');
  });
});
