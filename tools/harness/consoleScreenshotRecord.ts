/**
 * What docs/console.png shows, kept in the PNG itself (a `tEXt` chunk) by
 * tools/consoleScreenshot.ts: the rows and the histogram's caption as the page showed them, and
 * a digest of the image data, so the suite checks the committed image for test data without
 * reading pixels, and an image replaced by hand (without the tool) no longer matches its record.
 */
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Page } from 'playwright-core';

export interface ShownRow {
  id: string;
  operation: string;
  status: string;
  resource: string;
  group: string;
  lastError: string;
}

export interface ScreenshotRecord {
  drawnBy: string;
  width: number;
  /** SHA-256 of the image's IDAT data (its pixels, compressed). */
  imageSha256: string;
  histogram: string;
  rows: ShownRow[];
}

const keyword = 'management-gateway-console';
const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Strings that give test data away: the XSS probe, the tests' orchestration names, the words tests use. */
export const testDataPattern = /<img|onerror|<script|javascript:|window\.__|console-(completed|failed|running|refreshed)|\bxss\b|\bprobe\b|\btest\b/i;

interface Chunk {
  type: string;
  data: Buffer;
}

function chunksOf(png: Buffer): Chunk[] {
  if (!png.subarray(0, 8).equals(signature)) throw new Error('not a PNG file');
  const chunks: Chunk[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    chunks.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return chunks;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

export const imageDigestOf = (png: Buffer): string =>
  createHash('sha256')
    .update(
      Buffer.concat(
        chunksOf(png)
          .filter((each) => each.type === 'IDAT')
          .map((each) => each.data),
      ),
    )
    .digest('hex');

/** The PNG with `record` (its digest filled in) in a `tEXt` chunk before IEND. */
export function withRecord(png: Buffer, record: Omit<ScreenshotRecord, 'imageSha256'>): Buffer {
  const text = JSON.stringify({ ...record, imageSha256: imageDigestOf(png) });
  const end = png.length - 12;
  if (png.toString('latin1', end + 4, end + 8) !== 'IEND') throw new Error('the PNG does not end with IEND');
  return Buffer.concat([png.subarray(0, end), chunk('tEXt', Buffer.from(`${keyword}\0${text}`, 'latin1')), png.subarray(end)]);
}

/** The record the tool wrote into `png`, if any. */
export function recordOf(png: Buffer): ScreenshotRecord | undefined {
  const text = chunksOf(png).find((each) => each.type === 'tEXt' && each.data.toString('latin1').startsWith(`${keyword}\0`));
  return text ? (JSON.parse(text.data.toString('latin1').slice(keyword.length + 1)) as ScreenshotRecord) : undefined;
}

/** The orchestrations the console's list shows, as its cells read. */
export async function shownRows(page: Page): Promise<ShownRow[]> {
  const rows = page.locator('table.orchestrations tbody tr');
  const shown: ShownRow[] = [];
  for (const row of await rows.all()) {
    const cell = (index: number) => row.locator('td').nth(index);
    shown.push({
      id: (await row.getAttribute('data-id')) ?? '',
      operation: (await cell(1).innerText()).replace(/\s+/g, ''),
      status: await cell(5).innerText(),
      resource: await cell(6).locator('.resource-name').innerText(),
      group: await cell(6).locator('.resource-group').innerText(),
      lastError: await cell(8).innerText(),
    });
  }
  return shown;
}
