// The MCP tools' port to a relay: one JSON-RPC call. The stdio server reaches the relay over HTTP.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import { ERROR_CODES } from '../relay-core/domain/errors';
import { MUTATING_METHODS } from '../relay-core/jsonrpc/method';

export interface RelayClient {
  /** One JSON-RPC call; a change is sent under a fresh idempotency key of its own (see `keyedCall`). */
  call<T = unknown>(method: string, params: Record<string, unknown>): Promise<T>;
  /**
   * The caller's events after `since` (from now without it), answered at the first one or, after `wait_seconds`,
   * empty with the same cursor (GET /events as a long poll).
   */
  events(query: EventsQuery): Promise<EventsPage>;
}

export interface EventsQuery {
  since?: string;
  wait_seconds: number;
  limit?: number;
  /** Ends the wait early with an empty page (the in-process client; a subscription's loop aborts it as it closes). */
  signal?: AbortSignal;
}

export interface EventsPage {
  events: Array<{
    cursor: string;
    event_id: string;
    type: string;
    thread_id: string;
    at: string;
    by?: string;
    via?: string;
    [field: string]: unknown;
  }>;
  cursor: string;
}

/**
 * What one call sends. A change (a method in MUTATING_METHODS) gets one fresh key, in
 * `metadata.client_idempotency_key` and as the Idempotency-Key beside it, so a retry of this call (the HTTP client
 * retries a 5xx or a dropped connection) never applies it twice; a read goes as it is.
 */
export function keyedCall(
  method: string,
  params: Record<string, unknown>,
): { params: Record<string, unknown>; idempotencyKey?: string } {
  if (!MUTATING_METHODS.has(method)) return { params };
  const idempotencyKey = randomUUID();
  const metadata = {
    ...(params.metadata as Record<string, unknown> | undefined),
    client_idempotency_key: idempotencyKey,
  };
  return { params: { ...params, metadata }, idempotencyKey };
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

const READ_ONLY = new Set(['tasks/get', 'tasks/list', 'agents/list', 'approvals/get']);

const REQUEST_TIMEOUT_MS = 15_000;
/** The longest a relay's Retry-After is honoured before a retry (the tool call is waiting on it). */
const MAX_RETRY_AFTER_MS = 5_000;

interface HttpAnswer {
  status: number;
  text: string;
  /** Retry-After in milliseconds, when the relay sent one in seconds. */
  retryAfterMs?: number;
}

/**
 * One POST over a kept-alive connection. node:http rather than fetch: fetch costs more per call on Node 20, and
 * that is most of what the stdio hop adds to a tool call (docs/benchmarks.md, "Measurements behind the defaults").
 */
function post(url: URL, agent: http.Agent, headers: Record<string, string>, body: string): Promise<HttpAnswer> {
  return send(
    url,
    agent,
    'POST',
    { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    body,
    REQUEST_TIMEOUT_MS,
  );
}

function send(
  url: URL,
  agent: http.Agent,
  method: 'GET' | 'POST',
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
): Promise<HttpAnswer> {
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      const retryAfter = Number(res.headers['retry-after']);
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text, ...(retryAfter >= 0 ? { retryAfterMs: retryAfter * 1000 } : {}) }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

/** A long poll's answer is due `wait` seconds after it was asked; this much longer is a relay that stopped answering. */
const LONG_POLL_GRACE_MS = 10_000;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * How the client retries a transient failure (a 5xx, a dropped or refused connection): p-retry's backoff,
 * `minTimeout` × `factor`^n up to `maxTimeout` between attempts, `retries` times at most.
 */
export interface RetryPolicy {
  retries: number;
  minTimeout: number;
  factor: number;
  maxTimeout: number;
}

/** 200 ms, 600 ms, 1.5 s: a tool call outlasts a relay restart of a couple of seconds. */
const DEFAULT_RETRY: RetryPolicy = { retries: 3, minTimeout: 200, factor: 3, maxTimeout: 1_500 };

/** A failure worth the same request again, with the relay's Retry-After (capped) when it sent one. */
class TransientFailure extends Error {
  constructor(
    readonly failure: RelayCallError,
    readonly retryAfterMs = 0,
  ) {
    super(failure.message);
  }
}

export class HttpRelayClient implements RelayClient {
  private nextId = 1;
  private readonly endpoint: URL;
  private readonly agent: http.Agent;
  private readonly sessionId = randomUUID();
  private readonly retry: RetryPolicy;

  constructor(private readonly opts: { relayUrl: string; apiKey: string; retry?: Partial<RetryPolicy> }) {
    this.endpoint = new URL(`${opts.relayUrl}/a2a`);
    this.agent =
      this.endpoint.protocol === 'https:' ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
  }

  async call<T>(method: string, unkeyed: Record<string, unknown>): Promise<T> {
    const { params, idempotencyKey } = keyedCall(method, unkeyed);
    // Only what is safe to repeat is repeated: a read, or a change under its idempotency key.
    const retryable = READ_ONLY.has(method) || idempotencyKey !== undefined;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.opts.apiKey}`,
      'content-type': 'application/json',
      // Recorded as the surface in the thread's status history (the relay treats it as informational).
      'x-relay-surface': 'mcp',
      // One session per server process: what a policy's per-session rate limit counts.
      'x-relay-session': this.sessionId,
    };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });

    return this.retrying(retryable ? this.retry.retries : 0, async () => {
      const response = await this.reach(() => post(this.endpoint, this.agent, headers, body));
      const payload = parseJson(response.text) as
        { result?: T; error?: { code: number; message: string; data?: { code?: string } } } | undefined;
      const relayError =
        payload?.error &&
        new RelayCallError(payload.error.data?.code ?? 'error', payload.error.code, payload.error.message);
      if (response.status >= 500 || !payload) {
        // The relay's own failure (it answers 5xx for those, with the JSON-RPC error): worth the same call again.
        throw new TransientFailure(
          relayError ??
            new RelayCallError('relay_unavailable', undefined, `the relay answered HTTP ${response.status}`),
          response.retryAfterMs,
        );
      }
      if (relayError) throw relayError;
      return payload.result as T;
    });
  }

  async events(query: EventsQuery): Promise<EventsPage> {
    const deadline = Date.now() + query.wait_seconds * 1000;
    const headers = { authorization: `Bearer ${this.opts.apiKey}`, accept: 'application/json' };
    return this.retrying(this.retry.retries, async () => {
      // A retry waits only what is left of the time asked for, so the tool answers when the agent expects it.
      const wait = Math.max(0, Math.floor((deadline - Date.now()) / 1000));
      const url = new URL(`${this.opts.relayUrl}/events`);
      if (query.since !== undefined) url.searchParams.set('since', query.since);
      url.searchParams.set('wait', String(wait));
      if (query.limit !== undefined) url.searchParams.set('limit', String(query.limit));
      const response = await this.reach(() =>
        send(url, this.agent, 'GET', headers, undefined, wait * 1000 + LONG_POLL_GRACE_MS),
      );
      const payload = parseJson(response.text) as (EventsPage & { code?: string; message?: string }) | undefined;
      if (response.status === 200 && payload && Array.isArray(payload.events))
        return { events: payload.events, cursor: payload.cursor };
      const code = payload?.code ?? 'relay_unavailable';
      const error = new RelayCallError(
        code,
        (ERROR_CODES as Record<string, number>)[code],
        payload?.message ?? `the relay answered HTTP ${response.status}`,
      );
      if (response.status < 500) throw error;
      throw new TransientFailure(error, response.retryAfterMs);
    });
  }

  /** One request; a relay that cannot be reached (refused, reset, timed out) is a transient failure. */
  private async reach(request: () => Promise<HttpAnswer>): Promise<HttpAnswer> {
    try {
      return await request();
    } catch (error) {
      const cause = (error as { code?: string }).code ?? (error as Error).name;
      throw new TransientFailure(
        new RelayCallError(
          'relay_unreachable',
          undefined,
          `cannot reach the relay at ${this.opts.relayUrl} (${cause}); is it running? (RELAY_URL)`,
        ),
      );
    }
  }

  /**
   * `attempt` again after a transient failure, up to `retries` times; anything else (the relay's answer that the
   * call is wrong) at once. A relay's Retry-After is waited for on top of the backoff. The last transient failure
   * is what the caller sees.
   */
  private async retrying<T>(retries: number, attempt: () => Promise<T>): Promise<T> {
    try {
      return await pRetry(attempt, {
        ...this.retry,
        retries,
        shouldRetry: ({ error }) => error instanceof TransientFailure,
        onFailedAttempt: async ({ error, retriesLeft }) => {
          if (error instanceof TransientFailure && retriesLeft > 0 && error.retryAfterMs > 0)
            await sleep(Math.min(error.retryAfterMs, MAX_RETRY_AFTER_MS));
        },
      });
    } catch (error) {
      throw error instanceof TransientFailure ? error.failure : error;
    }
  }

  /** Lets the process exit: closes the kept-alive sockets. */
  close(): void {
    this.agent.destroy();
  }
}
