/**
 * How close the app is to the management service's throttling: ARM answers every request with
 * `x-ms-ratelimit-remaining-subscription-reads` / `-writes` / `-deletes` (and the tenant ones),
 * the requests left in its window for the identity that called. The last values seen go into
 * the call log and `health`, so an operator sees the budget draining before the 429s start.
 */
export const budgetHeaders = {
  subscriptionReads: 'x-ms-ratelimit-remaining-subscription-reads',
  subscriptionWrites: 'x-ms-ratelimit-remaining-subscription-writes',
  subscriptionDeletes: 'x-ms-ratelimit-remaining-subscription-deletes',
  tenantReads: 'x-ms-ratelimit-remaining-tenant-reads',
  tenantWrites: 'x-ms-ratelimit-remaining-tenant-writes',
} as const;

export type BudgetName = keyof typeof budgetHeaders;
export type RemainingBudget = Partial<Record<BudgetName, number>>;

/** The count one budget header gives, or undefined when it is absent or not a count. */
export function remainingCountOf(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  return trimmed !== undefined && /^\d{1,9}$/.test(trimmed) ? Number(trimmed) : undefined;
}

/** The remaining counts an answer's headers give (lower-case names), or undefined when none. */
export function remainingBudgetOf(headers: Record<string, string>): RemainingBudget | undefined {
  const remaining: RemainingBudget = {};
  for (const [name, header] of Object.entries(budgetHeaders) as [BudgetName, string][]) {
    const count = remainingCountOf(headers[header]);
    if (count !== undefined) remaining[name] = count;
  }
  return Object.keys(remaining).length > 0 ? remaining : undefined;
}

/** The last value of each count, with when it was seen. */
export class UpstreamBudget {
  readonly #last: Partial<Record<BudgetName, { remaining: number; seenAt: string }>> = {};

  constructor(private readonly now: () => number = Date.now) {}

  observe(headers: Record<string, string>): void {
    const remaining = remainingBudgetOf(headers);
    if (!remaining) return;
    const seenAt = new Date(this.now()).toISOString();
    for (const [name, value] of Object.entries(remaining) as [BudgetName, number][]) this.#last[name] = { remaining: value, seenAt };
  }

  snapshot(): Partial<Record<BudgetName, { remaining: number; seenAt: string }>> {
    return { ...this.#last };
  }

  /** The last counts, each named by the header that told it (what the remaining-budget gauge reports). */
  byHeader(): { header: string; remaining: number }[] {
    return (Object.entries(this.#last) as [BudgetName, { remaining: number }][]).map(([name, seen]) => ({
      header: budgetHeaders[name],
      remaining: seen.remaining,
    }));
  }
}
