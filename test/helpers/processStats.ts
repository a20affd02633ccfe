/** What Linux tells of another process: resident memory and open sockets (from /proc). */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Resident set size in bytes; with `peak`, the high-water mark (VmHWM). */
export function residentBytes(pid: number, peak = false): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${peak ? 'VmHWM' : 'VmRSS'}:\\s+(\\d+) kB`, 'm').exec(status);
  return Number(match?.[1] ?? 0) * 1024;
}

export function openSockets(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false;
    }
  }).length;
}
