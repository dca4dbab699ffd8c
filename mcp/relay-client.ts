// The MCP tools' port to a relay: one JSON-RPC call. The stdio server reaches the relay over HTTP.
import { setTimeout as sleep } from 'node:timers/promises';

export interface CallOptions {
  /** Sent as metadata and header; a retry with the same key never creates a second thread. */
  idempotencyKey?: string;
}

export interface RelayClient {
  call<T = unknown>(method: string, params: Record<string, unknown>, options?: CallOptions): Promise<T>;
}

/** A relay answer that is an error, or a relay that cannot be reached; its message is what the agent sees. */
export class RelayCallError extends Error {
  constructor(
    readonly code: string,
    readonly numericCode: number | undefined,
    message: string,
  ) {
    super(numericCode === undefined ? `${code}: ${message}` : `${code} (${numericCode}): ${message}`);
    this.name = 'RelayCallError';
  }
}

const READ_ONLY = new Set(['tasks/get', 'tasks/list', 'agents/list']);

export class HttpRelayClient implements RelayClient {
  private nextId = 1;

  constructor(
    private readonly opts: { relayUrl: string; apiKey: string; retryDelaysMs?: number[]; fetch?: typeof fetch },
  ) {}

  async call<T>(method: string, params: Record<string, unknown>, options: CallOptions = {}): Promise<T> {
    const retryable = READ_ONLY.has(method) || options.idempotencyKey !== undefined;
    const delays = retryable ? (this.opts.retryDelaysMs ?? [200, 600, 1500]) : [];
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.opts.apiKey}`,
      'content-type': 'application/json',
      // Recorded as the surface in the thread's status history (the relay treats it as informational).
      'x-relay-surface': 'mcp',
    };
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });
    const doFetch = this.opts.fetch ?? fetch;

    for (let attempt = 0; ; attempt += 1) {
      let transient: RelayCallError;
      try {
        const response = await doFetch(`${this.opts.relayUrl}/a2a`, { method: 'POST', headers, body, signal: AbortSignal.timeout(15_000) });
        const payload = (await response.json().catch(() => undefined)) as
          | { result?: T; error?: { code: number; message: string; data?: { code?: string } } }
          | undefined;
        if (payload?.error) {
          throw new RelayCallError(payload.error.data?.code ?? 'error', payload.error.code, payload.error.message);
        }
        if (response.status >= 500 || !payload) {
          transient = new RelayCallError('relay_unavailable', undefined, `the relay answered HTTP ${response.status}`);
        } else {
          return payload.result as T;
        }
      } catch (error) {
        if (error instanceof RelayCallError) throw error;
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        transient = new RelayCallError('relay_unreachable', undefined, `cannot reach the relay at ${this.opts.relayUrl} (${cause}); is it running? (RELAY_URL)`);
      }
      const delay = delays[attempt];
      if (delay === undefined) throw transient;
      await sleep(delay);
    }
  }
}
