// Work through a list a few items at a time (each lane takes the next item when it is done with one).

/**
 * Runs `run` on every item, at most `lanes` at once. Every lane finishes before it returns; the first error is then
 * thrown (a failed item does not stop the others).
 */
export async function inParallel<T>(
  items: readonly T[],
  lanes: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(lanes, items.length) }, lane));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
