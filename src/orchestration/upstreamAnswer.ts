/** An upstream response as the long-running rules read it: its body parsed when it is JSON. */
import type { UpstreamResponse } from '../upstream';
import type { UpstreamAnswer } from './lroRules';

function parseBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function answerOf(response: UpstreamResponse): UpstreamAnswer {
  return { status: response.status, headers: response.headers, body: parseBody(response.bodyText) };
}
