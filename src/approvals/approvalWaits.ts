/**
 * The starts waiting for approval, one empty marker blob each (`approvals/waiting/{starter}/{id}`),
 * so how many wait, per starter and in all, is one listing of markers (a few hundred bytes each,
 * APPROVAL_MAX_PENDING at most), never a read of the documents; and an approver's list of what
 * it may decide reads the markers' metadata (who started it, what, until when, who may approve).
 *
 * A marker is written before its start is stored, and the start refused if the count, taken
 * after, passes a bound: two starts racing for the last place may both be refused, never both
 * kept. A marker goes when its start stops waiting (approved, rejected, expired, terminated); one
 * a crash left behind stops counting once its expiry passed, and a count removes it an hour after.
 */
import { createHash } from 'node:crypto';
import type { ContainerClient } from '@azure/storage-blob';
import { markerFormat, RecordStore } from '../storage';
import type { StorageBudget } from '../storage';

const prefix = 'approvals/waiting/';
/** How long past its expiry a marker a crash left behind is kept before a count removes it. */
const leftBehindMs = 3600_000;

export interface WaitingMarker {
  id: string;
  name: string;
  startedBy: string;
  expiresAt: number;
  approvers: string[];
}

/** A starter's folder: a digest, so any caller name makes a valid blob name. */
function starterFolder(startedBy: string): string {
  return createHash('sha256').update(startedBy).digest('hex').slice(0, 24);
}

function metadataText(value: string): string {
  return encodeURIComponent(value);
}

function textOf(metadata: string | undefined): string {
  try {
    return decodeURIComponent(metadata ?? '');
  } catch {
    return '';
  }
}

export class ApprovalWaits {
  /** Empty blobs, in the container the orchestration store makes. */
  readonly #markers: RecordStore<null>;

  constructor(
    private readonly container: ContainerClient,
    private readonly budget: StorageBudget,
  ) {
    this.#markers = new RecordStore({ container, budget, format: markerFormat });
  }

  #marker(startedBy: string, id: string): string {
    return `${prefix}${starterFolder(startedBy)}/${id}`;
  }

  async hold(marker: WaitingMarker): Promise<void> {
    const metadata = {
      name: marker.name,
      startedby: metadataText(marker.startedBy),
      expiresat: String(marker.expiresAt),
      approvers: metadataText(JSON.stringify(marker.approvers)),
    };
    await this.#markers.write(this.#marker(marker.startedBy, marker.id), null, { metadata, what: 'hold a place for a start waiting for approval' });
  }

  /**
   * Holds a place for `marker` if the bounds allow it: the marker written, then the waiting ones
   * counted, and the marker removed again when the starter's or the app's bound is passed. The
   * refusal says which bound, and when the earliest of those places frees (its expiry).
   */
  async admit(
    marker: WaitingMarker,
    bounds: { perCaller: number; total: number },
    now: number,
  ): Promise<{ admitted: true } | { admitted: false; bound: 'caller' | 'all'; retryAfterSeconds: number }> {
    await this.hold(marker);
    try {
      const waiting = await this.waiting(now, bounds.total + 1);
      const own = waiting.filter((entry) => entry.startedBy === marker.startedBy);
      const passed =
        own.length > bounds.perCaller
          ? { bound: 'caller' as const, holders: own }
          : waiting.length > bounds.total
            ? { bound: 'all' as const, holders: waiting }
            : undefined;
      if (!passed) return { admitted: true };
      await this.release(marker.startedBy, marker.id);
      const earliest = Math.min(...passed.holders.filter((entry) => entry.id !== marker.id).map((entry) => entry.expiresAt));
      return { admitted: false, bound: passed.bound, retryAfterSeconds: Math.max(1, Math.ceil((earliest - now) / 1000)) };
    } catch (error) {
      await this.release(marker.startedBy, marker.id).catch(() => undefined);
      throw error;
    }
  }

  async release(startedBy: string, id: string): Promise<void> {
    await this.#markers.remove(this.#marker(startedBy, id), undefined, 'release a place of a start waiting for approval');
  }

  /**
   * Every start still waiting (its expiry not passed), from the markers alone, at most `limit`
   * read (the bound on waiting starts and a page more); markers left behind long ago are removed.
   */
  async waiting(now: number, limit: number): Promise<WaitingMarker[]> {
    const found: WaitingMarker[] = [];
    const leftBehind: string[] = [];
    let read = 0;
    const pages = this.budget.pages('list the starts waiting for approval', (abortSignal) =>
      this.container.listBlobsFlat({ prefix, includeMetadata: true, abortSignal }).byPage({ maxPageSize: 5000 }),
    );
    for await (const page of pages) {
      for (const blob of page.segment.blobItems) {
        const metadata = blob.metadata ?? {};
        const expiresAt = Number(metadata.expiresat);
        if (!(expiresAt > now)) {
          if (!(expiresAt + leftBehindMs > now)) leftBehind.push(blob.name);
          continue;
        }
        let approvers: unknown;
        try {
          approvers = JSON.parse(textOf(metadata.approvers));
        } catch {
          approvers = [];
        }
        found.push({
          id: blob.name.slice(blob.name.lastIndexOf('/') + 1),
          name: metadata.name ?? '',
          startedBy: textOf(metadata.startedby),
          expiresAt,
          approvers: Array.isArray(approvers) ? approvers.map(String) : [],
        });
      }
      read += page.segment.blobItems.length;
      if (read >= limit) break;
    }
    // Best effort: a marker not removed now is removed by a later count.
    await Promise.allSettled(leftBehind.slice(0, 100).map((name) => this.#markers.remove(name, undefined, 'remove a place left behind')));
    return found;
  }
}
