// The runner's JSON-RPC client: every runs/* call is safe to repeat (lease ids, progress seq), so a relay that restarts
// or a store that blips is waited out with backoff instead of failing the run.
import { setTimeout as sleep } from 'node:timers/promises';

/** An answer of the relay that is an error of the call itself (not the relay being away): never retried. */
export class RunnerCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> | undefined,
  ) {
    super(`${code}: ${message}`);
    this.name = 'RunnerCallError';
  }
}

const BACKOFF_MS = [200, 500, 1_000, 2_000, 3_000];

export class RunnerClient {
  private nextId = 1;

  constructor(private readonly opts: { relayUrl: string; apiKey: string; log: (line: string) => void }) {}

  /**
   * One call, repeated while the relay cannot answer (unreachable, 5xx, rate_limited with a retry time) until
   * `deadline` (ms since epoch; forever without one). Throws RunnerCallError for the relay's refusals.
   */
  async call<T>(
    method: string,
    params: Record<string, unknown>,
    opts: { deadline?: number; timeoutMs?: number; idempotencyKey?: string } = {},
  ): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      let wait = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!;
      let why: string;
      try {
        const response = await fetch(`${this.opts.relayUrl}/a2a`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${this.opts.apiKey}`,
            'content-type': 'application/json',
            ...(opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}),
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
          signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
        });
        const body = (await response.json().catch(() => null)) as {
          result?: T;
          error?: { message: string; data?: { code?: string; details?: Record<string, unknown> } };
        } | null;
        if (body?.error && response.status < 500) {
          const code = body.error.data?.code ?? 'error';
          const retryAfter = Number(body.error.data?.details?.retry_after_ms);
          if (code === 'rate_limited' && retryAfter > 0) {
            wait = retryAfter;
            why = 'rate_limited';
          } else {
            throw new RunnerCallError(code, body.error.message, body.error.data?.details);
          }
        } else if (body && 'result' in body && response.status < 500) {
          return body.result as T;
        } else {
          why = body?.error?.message ?? `HTTP ${response.status}`;
        }
      } catch (error) {
        if (error instanceof RunnerCallError) throw error;
        why = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      }
      if (opts.deadline !== undefined && Date.now() + wait > opts.deadline)
        throw new Error(`${method}: the relay did not answer in time (${why})`);
      if (attempt === 2 && why !== 'rate_limited')
        this.opts.log(`${method}: the relay is not answering (${why}); retrying`);
      await sleep(wait);
    }
  }
}
