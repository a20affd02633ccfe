/** local.settings.json as Core Tools reads it: Values into the environment, the environment winning. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyLocalSettings, LocalSettingsError } from '../../../tools/localSettings';

let folder: string;
let file: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'local-settings-'));
  file = join(folder, 'local.settings.json');
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

function errorOf(action: () => unknown): Error {
  try {
    action();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

describe('applyLocalSettings', () => {
  it('sets the Values the environment lacks and keeps the ones it has', () => {
    writeFileSync(
      file,
      JSON.stringify({
        IsEncrypted: false,
        Values: { PROVIDER_NAMESPACE: 'Microsoft', PORT: 7075, WEBSITE_AUTH_ENABLED: false, UPSTREAM_AUTH: 'static' },
        Host: { LocalHttpPort: 7080 },
      }),
    );
    const env: NodeJS.ProcessEnv = { UPSTREAM_AUTH: 'passthrough' };
    const result = applyLocalSettings(file, env);
    expect(env).toEqual({ PROVIDER_NAMESPACE: 'Microsoft', PORT: '7075', WEBSITE_AUTH_ENABLED: 'false', UPSTREAM_AUTH: 'passthrough' });
    expect(result).toEqual({ applied: ['PROVIDER_NAMESPACE', 'PORT', 'WEBSITE_AUTH_ENABLED'], keptFromEnvironment: ['UPSTREAM_AUTH'], localHttpPort: 7080 });
  });

  it('reads nothing when there is no file', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(applyLocalSettings(file, env)).toBeUndefined();
    expect(env).toEqual({});
  });

  it('takes comments and a byte-order mark, as Core Tools does', () => {
    writeFileSync(file, '\uFEFF{\n  // local runs\n  "Values": { "PORT": "7072" /* not 7071 */ }\n}\n');
    const env: NodeJS.ProcessEnv = {};
    applyLocalSettings(file, env);
    expect(env.PORT).toBe('7072');
  });

  it('refuses IsEncrypted: true, saying why and what to do', () => {
    writeFileSync(file, JSON.stringify({ IsEncrypted: true, Values: { AzureWebJobsStorage: 'ZW5jcnlwdGVk' } }));
    const env: NodeJS.ProcessEnv = {};
    const error = errorOf(() => applyLocalSettings(file, env));
    expect(error).toBeInstanceOf(LocalSettingsError);
    expect(error.message).toMatch(/"IsEncrypted": true/);
    expect(error.message).toMatch(/func settings decrypt/);
    expect(env).toEqual({});
  });

  it('names the file, line and column of invalid JSON, and never quotes it', () => {
    writeFileSync(file, '{\n  "Values": {\n    "UPSTREAM_STATIC_TOKEN": "CANARY-SECRET-in-settings"\n    "PORT": "7071"\n  }\n}\n');
    const error = errorOf(() => applyLocalSettings(file, {}));
    expect(error.message).toBe(`${file} is not valid JSON: line 4, column 5: comma expected.`);
  });

  it.each([
    ['a file that is not an object', '[1, 2]', /must hold a JSON object/],
    ['Values that are not an object', '{"Values": "PORT=1"}', /"Values" must be an object/],
    ['a value that is an object', '{"Values": {"ALLOWED_SCOPES": ["/subscriptions/x"]}}', /Values\.ALLOWED_SCOPES must be a string/],
    ['a LocalHttpPort that is no port', '{"Host": {"LocalHttpPort": "seventy"}}', /Host\.LocalHttpPort must be a port number/],
    ['an empty file', '', /is not valid JSON: line 1, column 1/],
  ])('refuses %s, naming it', (_title, text, message) => {
    writeFileSync(file, text);
    expect(() => applyLocalSettings(file, {})).toThrow(message);
  });
});
