/**
 * Reads a JSON request body within the documented limits: a size cap (413), a JSON media
 * type (415), a nesting cap, and a parse that never throws past this module (400).
 */
import { GatewayError } from '../errors';
import { nestingDepth } from './nestingDepth';

/** Deeper than any spec resource nests; a deeper body is an attack, not a declaration. */
export const maxJsonDepth = 64;

export interface ParsedBody {
  /** The body as sent, forwarded upstream unchanged. */
  text: string;
  value: unknown;
}

/**
 * Whether a body is declared JSON. One declared as nothing is not: a browser page of another
 * origin can send a body without a type and no preflight, and a JSON API must not take it.
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || /^application\/[\w.+-]+\+json$/.test(mediaType);
}

export function parseJsonBody(bytes: Uint8Array, contentType: string | null | undefined, maxBytes: number, name: string): ParsedBody | undefined {
  if (bytes.byteLength > maxBytes) {
    throw new GatewayError('PayloadTooLarge', `The request body is ${bytes.byteLength} bytes; the limit is ${maxBytes}.`, { target: name });
  }
  const text = utf8TextOf(bytes, name);
  if (text.trim() === '') return undefined;
  if (!isJsonMediaType(contentType)) {
    throw new GatewayError(
      'UnsupportedMediaType',
      `The request body must be declared JSON: send it with Content-Type: application/json${contentType ? `, not ${contentType}` : ''}.`,
      {
        target: 'Content-Type',
      },
    );
  }
  const depth = nestingDepth(text);
  if (depth > maxJsonDepth) {
    throw new GatewayError('InvalidJson', `The request body nests ${depth} levels deep; the limit is ${maxJsonDepth}.`, { target: name });
  }
  try {
    return { text, value: JSON.parse(text) as unknown };
  } catch (error) {
    throw new GatewayError('InvalidJson', `The request body is not valid JSON: ${(error as Error).message}`, { target: name });
  }
}

/**
 * JSON is UTF-8 (RFC 8259 section 8.1). A lenient decoder would put U+FFFD in place of bad
 * bytes and the app would forward text the caller never sent, so bad bytes are refused. A
 * leading byte-order mark (some Windows tools write one) is dropped: the RFC lets a parser
 * ignore it and forbids sending one, so the upstream gets the JSON without it.
 */
function utf8TextOf(bytes: Uint8Array, name: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new GatewayError('InvalidJson', 'The request body is not valid UTF-8.', { target: name });
  }
}
