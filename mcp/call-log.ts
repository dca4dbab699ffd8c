// Logging to the MCP client: logging/setLevel, and a notifications/message for each relay call made on the caller's behalf.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  LoggingLevelSchema,
  SetLevelRequestSchema,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { RelayCallError, type EventsQuery, type RelayClient } from './relay-client';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const SEVERITY = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/** Failures that are the relay's or the network's, not the caller's. */
const RELAY_SIDE = new Set(['relay_unreachable', 'relay_unavailable', 'unavailable', 'internal']);

export const LOGGER = 'handoff-relay';

/**
 * One connection's log. Notifications go out inside the request that caused them (its `sendNotification`), so over
 * Streamable HTTP they reach the client on that request's stream; the level set by logging/setLevel holds for the
 * connection (one request, on the stateless /mcp). Default level: info.
 */
export class CallLog {
  private level: LoggingLevel = 'info';
  private readonly request = new AsyncLocalStorage<Extra>();

  /**
   * Declares logging and handles logging/setLevel, and runs every request handler registered from now on inside its
   * request's context (the one place to reach all of them: McpServer registers through this method).
   */
  register(server: McpServer): void {
    const inner = server.server;
    inner.registerCapabilities({ logging: {} });
    inner.setRequestHandler(SetLevelRequestSchema, async ({ params }) => {
      this.level = params.level;
      return {};
    });
    const set = inner.setRequestHandler.bind(inner);
    inner.setRequestHandler = ((schema, handler) =>
      set(schema, (request, extra) =>
        this.request.run(extra, () => handler(request, extra)),
      )) as typeof inner.setRequestHandler;
  }

  /** Sends one log message when `level` is at or above the connection's; never fails the call it reports on. */
  log(level: LoggingLevel, data: Record<string, unknown>): void {
    if (SEVERITY.get(level)! < SEVERITY.get(this.level)!) return;
    const extra = this.request.getStore();
    if (!extra) return;
    void extra
      .sendNotification({ method: 'notifications/message', params: { level, logger: LOGGER, data } })
      .catch(() => {});
  }

  /** `relay` with every call and events wait reported: method, thread, outcome, time taken (never a key or content). */
  wrap(relay: RelayClient): RelayClient {
    return {
      call: async <T>(method: string, params: Record<string, unknown>): Promise<T> => {
        const started = Date.now();
        const threadId = typeof params.task_id === 'string' ? { thread_id: params.task_id } : {};
        try {
          const result = await relay.call<T>(method, params);
          const created =
            method === 'message/send' && !params.task_id ? { thread_id: (result as { task_id?: string }).task_id } : {};
          this.log('info', {
            message: `relay ${method}: ok`,
            method,
            ...threadId,
            ...created,
            ms: Date.now() - started,
          });
          return result;
        } catch (error) {
          const code = error instanceof RelayCallError ? error.code : 'error';
          this.log(RELAY_SIDE.has(code) ? 'error' : 'warning', {
            message: `relay ${method}: ${(error as Error).message}`,
            method,
            ...threadId,
            code,
            ms: Date.now() - started,
          });
          throw error;
        }
      },
      events: async (query: EventsQuery) => {
        const started = Date.now();
        const page = await relay.events(query);
        this.log('debug', {
          message: `relay events: ${page.events.length} after ${query.since ?? 'now'}`,
          cursor: page.cursor,
          ms: Date.now() - started,
        });
        return page;
      },
    };
  }
}
