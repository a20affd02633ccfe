/** Runs `work` over `items`, `concurrency` at a time, in the items' order. */
export async function eachLimited<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await work(next);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
}
