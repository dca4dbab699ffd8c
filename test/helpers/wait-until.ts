// Polls a condition until it holds, for state that settles asynchronously (queues, workers). The default wait is
// generous: a loaded machine can take seconds, and a condition that never holds still fails, just later.
export async function waitUntil<T>(check: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
