/** What Linux tells of another process: resident memory, open sockets and CPU time (from /proc). */
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

/** CPU time the process has used, user and system, in milliseconds. */
export function cpuMs(pid: number): number {
  // Fields after the command (which may hold spaces, so split after its closing parenthesis): utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticksPerSecond = 100;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}
