/**
 * A file written beside its place, then renamed into it: a reader, or a second process writing
 * the same file, never meets half of it.
 */
import { chmodSync, renameSync, writeFileSync } from 'node:fs';

export function writeWhole(path: string, data: string | Buffer, mode?: number): void {
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, data, mode === undefined ? undefined : { mode });
  // The umask may have narrowed the mode the file was created with.
  if (mode !== undefined) chmodSync(partial, mode);
  renameSync(partial, path);
}
