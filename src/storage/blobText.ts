/**
 * The few blob operations the stores share: read a blob's text with the ETag of that same
 * version, and tell a failed write condition from a real storage failure.
 */
import type { BlockBlobClient } from '@azure/storage-blob';

export function statusCodeOf(error: unknown): number | undefined {
  return (error as { statusCode?: number } | undefined)?.statusCode;
}

/** 412 (If-Match failed) or 409 (If-None-Match: * found the blob): another writer was first. */
export function isConditionFailure(error: unknown): boolean {
  const status = statusCodeOf(error);
  return status === 412 || status === 409;
}

/** A blob's text, ETag and time of last change, from one download; undefined when there is no such blob. */
/**
 * A blob's text with its version; `lastModified` and `servedAt` (the answer's `Date`) are both
 * storage's clock, so their difference is a blob's age whatever this instance's clock says.
 */
export async function downloadText(
  blob: BlockBlobClient,
  abortSignal?: AbortSignal,
): Promise<{ text: string; etag: string; lastModified?: Date; servedAt?: Date } | undefined> {
  try {
    const response = await blob.download(0, undefined, { abortSignal });
    const chunks: Buffer[] = [];
    for await (const chunk of response.readableStreamBody!) chunks.push(Buffer.from(chunk as Buffer));
    return { text: Buffer.concat(chunks).toString('utf8'), etag: response.etag ?? '', lastModified: response.lastModified, servedAt: response.date };
  } catch (error) {
    if (statusCodeOf(error) === 404) return undefined;
    throw error;
  }
}
