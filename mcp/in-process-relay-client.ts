// The MCP tools' port to the relay inside the relay process: the JSON-RPC method table, called directly as one teammate.
import { resolveMethod } from '../relay-core/jsonrpc/dispatch';
import { MUTATING_METHODS, type MethodUseCases } from '../relay-core/jsonrpc/method';
import type { AgentDoc } from '../relay-core/domain/documents';
import { ERROR_CODES, RelayError } from '../relay-core/domain/errors';
import type { RateLimiter } from '../relay-core/ops/rate-limiter';
import { keyedCall, RelayCallError, type EventsPage, type EventsQuery, type RelayClient } from './relay-client';

export class InProcessRelayClient implements RelayClient {
  constructor(
    private readonly deps: {
      uses: MethodUseCases;
      /** The teammate calls run as; a function where it may change between calls (an MCP session re-reads its key). */
      caller: AgentDoc | (() => AgentDoc);
      rateLimiter?: RateLimiter;
      sessionId?: string;
    },
  ) {}

  private get caller(): AgentDoc {
    return typeof this.deps.caller === 'function' ? this.deps.caller() : this.deps.caller;
  }

  async call<T>(method: string, unkeyed: Record<string, unknown>): Promise<T> {
    const { params, idempotencyKey } = keyedCall(method, unkeyed);
    const handler = resolveMethod(method, params);
    if (!handler)
      throw new RelayCallError('method_not_found', ERROR_CODES.method_not_found, `Unknown method ${method}`);
    try {
      if (this.deps.rateLimiter && MUTATING_METHODS.has(method))
        await this.deps.rateLimiter.consume(this.caller.handle);
      return (await handler(
        { ...this.deps.uses, caller: this.caller, idempotencyKey, via: 'mcp', sessionId: this.deps.sessionId },
        params,
      )) as T;
    } catch (error) {
      if (error instanceof RelayError) throw new RelayCallError(error.code, error.numericCode, error.message);
      throw error;
    }
  }

  async events(query: EventsQuery): Promise<EventsPage> {
    const feed = this.deps.uses.feed;
    if (!feed)
      throw new RelayCallError('method_not_found', ERROR_CODES.method_not_found, 'This relay keeps no event logs');
    try {
      const handle = this.caller.handle;
      const from = await feed.start(handle, query.since, 'since');
      return await feed.wait(handle, from, query.limit ?? 100, query.wait_seconds * 1000, query.signal);
    } catch (error) {
      if (error instanceof RelayError) throw new RelayCallError(error.code, error.numericCode, error.message);
      throw new RelayCallError(
        'unavailable',
        ERROR_CODES.unavailable,
        'The relay cannot read your events right now (its database is unreachable); retry shortly',
      );
    }
  }
}
