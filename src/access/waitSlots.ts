/**
 * How many `gateway-wait` answers this instance holds at once: per caller, so one caller cannot
 * hold them all, and in all, since each held request keeps a connection and memory however
 * cheap its watch is. Past either bound a wait is refused with 429 `TooManyWaits` before anything
 * is read or sent; its Retry-After is when the first of the waits it counted runs out, by when
 * a slot is free at the latest.
 */
import { GatewayError } from '../errors';

export interface WaitBounds {
  perCaller: number;
  perInstance: number;
}

interface Slot {
  caller: string;
  untilMs: number;
}

export class WaitSlots {
  readonly #all = new Set<Slot>();
  readonly #byCaller = new Map<string, Set<Slot>>();

  constructor(private readonly bounds: WaitBounds) {}

  /** Slots held now, in all. */
  get held(): number {
    return this.#all.size;
  }

  /** Takes a slot for a wait until `untilMs`, or throws 429; the function returned gives it back (once). */
  take(caller: string, untilMs: number, now: number): () => void {
    const own = this.#byCaller.get(caller) ?? new Set<Slot>();
    if (own.size >= this.bounds.perCaller) {
      throw this.#refusal(own, now, `This caller already holds ${this.bounds.perCaller} waits (GATEWAY_WAIT_MAX_PER_CALLER)`);
    }
    if (this.#all.size >= this.bounds.perInstance) {
      throw this.#refusal(this.#all, now, `This instance already holds ${this.bounds.perInstance} waits (GATEWAY_WAIT_MAX_PER_INSTANCE)`);
    }
    const slot: Slot = { caller, untilMs };
    own.add(slot);
    this.#byCaller.set(caller, own);
    this.#all.add(slot);
    return () => {
      this.#all.delete(slot);
      own.delete(slot);
      if (own.size === 0 && this.#byCaller.get(caller) === own) this.#byCaller.delete(caller);
    };
  }

  #refusal(held: ReadonlySet<Slot>, now: number, reason: string): GatewayError {
    const firstEndMs = Math.min(...[...held].map((slot) => slot.untilMs));
    const retryAfterSeconds = Math.max(1, Math.ceil((firstEndMs - now) / 1000));
    return new GatewayError('TooManyWaits', `${reason}: retry after ${retryAfterSeconds} s, or read the status without gateway-wait.`, {
      target: 'gateway-wait',
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}
