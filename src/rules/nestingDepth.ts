/**
 * How deep JSON nests, the one measure of the limit on a request body (src/http/jsonBody.ts)
 * and on an upstream answer (UPSTREAM_MAX_JSON_DEPTH), both checked before the text is parsed.
 * Deepest bracket nesting outside strings, read in one pass without parsing; with `stopAbove`,
 * the scan ends as soon as the nesting passes it (the answer is then `stopAbove + 1`).
 */
export function nestingDepth(text: string, stopAbove = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') {
      deepest = Math.max(deepest, ++depth);
      if (deepest > stopAbove) return deepest;
    } else if (char === '}' || char === ']') depth -= 1;
  }
  return deepest;
}
