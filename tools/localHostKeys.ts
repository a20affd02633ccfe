/**
 * `LOCAL_HOST_KEYS`: the function keys the local host checks, a JSON object of key names to
 * key values. Its messages name the setting and never repeat the text: JSON.parse's own
 * message quotes the text around the error, which here is a key.
 */
const expectedShape = 'a JSON object of key names to key values of at least 16 characters, e.g. {"default":"<a long random value>","master":"<another>"}';

export class LocalHostKeysError extends Error {}

export function parseLocalHostKeys(text: string | undefined): Record<string, string> | undefined {
  if (!text) return undefined;
  let keys: unknown;
  try {
    keys = JSON.parse(text);
  } catch {
    throw new LocalHostKeysError(`LOCAL_HOST_KEYS is not valid JSON: it must be ${expectedShape}.`);
  }
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys) || Object.values(keys).some((value) => typeof value !== 'string' || value.length < 16)) {
    throw new LocalHostKeysError(`LOCAL_HOST_KEYS must be ${expectedShape}.`);
  }
  return keys as Record<string, string>;
}
