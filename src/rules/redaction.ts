/**
 * Keeps secrets out of logs, errors and stored state (DEVELOPERS.md, Standards): values of
 * secret-named fields are replaced, and free text loses bearer tokens and query strings.
 */

/** Field names whose values are secrets in the spec's resources and in HTTP. */
const secretFieldPattern =
  /^(secureValue|password|storageAccountKey|workspaceKey|protectedSettings|CertificateSecretEncoded|certificatePassword|encodedCertificate|secret|authorization|token|access_?token|client_?secret|x-functions-key|.*(password|secret|token|key))$/i;

export const redactedMarker = '[redacted]';

export function isSecretField(name: string): boolean {
  return secretFieldPattern.test(name);
}

/** Whether a value holds anything: the upstream's own `secret: {}` hides nothing to redact. */
function holdsSomething(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  return typeof value !== 'object' || Object.keys(value).length > 0;
}

/** A deep copy with every secret field's value replaced; other fields are kept as they are. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([name, field]) => [
      name,
      isSecretField(name) && holdsSomething(field) ? redactedMarker : redactSecrets(field),
    ]),
  );
}

/** Free text (an error message) without bearer tokens, JWT-like strings or URL query strings. */
export function sanitizeText(text: string): string {
  return text
    .replace(/Bearer\s+[^\s"']+/gi, `Bearer ${redactedMarker}`)
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]*/g, redactedMarker)
    .replace(/(https?:\/\/[^\s?"']+)\?[^\s"']*/g, `$1?${redactedMarker}`);
}

/**
 * A failure for the log: its stack and those of its causes (a few levels), sanitised. A wrapped
 * failure's own stack says only where it was wrapped; the cause says what went wrong.
 */
export function failureForLog(thrown: unknown): string {
  const parts: string[] = [];
  let current: unknown = thrown;
  for (let depth = 0; depth < 3 && current !== undefined; depth += 1) {
    parts.push(String((current as Error)?.stack ?? current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return sanitizeText(parts.join('\nCaused by: '));
}
