// Polls a condition until it holds, for state that settles asynchronously (queues, workers). The default wait is
// generous: a loaded machine can take seconds, and a condition that never holds still fails, just later.
/** The default deadline; a wait for something scheduled (a retry, a Retry-After) adds that schedule to it. */
export const WAIT_MS = 15_000;

export async function waitUntil<T>(
  check: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = WAIT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
