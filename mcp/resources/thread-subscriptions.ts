// resources/subscribe on a long-lived MCP connection (stdio, or an /mcp session): the caller's event feed tells which subscribed thread changed.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { asMcpError } from '../mcp-errors';
import type { RelayClient } from '../relay-client';
import { INBOX_URI } from './inbox-resource';
import { readThread, threadIdOf, threadUri, THREAD_URI_PREFIX } from './thread-resource';

/** One long poll of the event feed (GET /events): a change is told as soon as the relay has it. */
const WAIT_SECONDS = 25;
/** After a failed poll (relay down), the next one waits this long, doubling up to the last. */
const RETRY_DELAYS_MS = [500, 1_000, 2_000, 5_000];

/**
 * The subscriptions of one MCP connection. The first subscription starts one loop that long-polls the caller's event
 * feed from the moment it was made; an event of a subscribed thread sends notifications/resources/updated for it, and
 * any event sends one for the inbox when that is subscribed. The loop ends when the last subscription goes or on close.
 */
export class ThreadSubscriptions {
  private readonly uris = new Set<string>();
  private loop: Promise<void> | undefined;
  private cursor: string | undefined;
  private closed = false;
  /** Ends the loop's pending long poll at close (in process: it would otherwise wait out WAIT_SECONDS). */
  private readonly stop = new AbortController();

  constructor(
    private readonly server: McpServer,
    private readonly relay: RelayClient,
  ) {}

  register(): void {
    this.server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
    this.server.server.setRequestHandler(SubscribeRequestSchema, async ({ params }) => {
      await this.subscribe(params.uri);
      return {};
    });
    this.server.server.setRequestHandler(UnsubscribeRequestSchema, async ({ params }) => {
      this.uris.delete(params.uri);
      return {};
    });
  }

  async subscribe(uri: string): Promise<void> {
    if (uri !== INBOX_URI) {
      const threadId = threadIdOf(uri);
      if (!threadId)
        throw new McpError(
          ErrorCode.InvalidParams,
          `${uri}: only ${INBOX_URI} and ${THREAD_URI_PREFIX}<thread id> can be subscribed to`,
        );
      await readThread(this.relay, threadId); // not found unless the caller sent or received it
    }
    // No loop running: the feed's position now, before the answer, so nothing after the subscription is missed. A
    // running (or ending) loop goes on from its own cursor.
    if (!this.loop) {
      const { cursor } = await asMcpError('Your events', () => this.relay.events({ wait_seconds: 0 }));
      if (!this.loop) this.cursor = cursor;
    }
    this.uris.add(uri);
    this.ensureLoop();
  }

  /** One loop while anything is subscribed; one that ends as a subscription arrives is started again from its cursor. */
  private ensureLoop(): void {
    if (this.loop || this.closed || this.uris.size === 0) return;
    this.loop = this.watch().finally(() => {
      this.loop = undefined;
      this.ensureLoop();
    });
  }

  private async watch(): Promise<void> {
    let failures = 0;
    while (this.uris.size > 0 && !this.closed) {
      try {
        const page = await this.relay.events({
          since: this.cursor,
          wait_seconds: WAIT_SECONDS,
          signal: this.stop.signal,
        });
        failures = 0;
        this.cursor = page.cursor;
        const changed = new Set(page.events.map((e) => threadUri(e.thread_id)));
        if (page.events.length > 0 && this.uris.has(INBOX_URI)) changed.add(INBOX_URI);
        for (const uri of changed)
          if (this.uris.has(uri) && !this.closed) await this.server.server.sendResourceUpdated({ uri });
      } catch {
        if (this.closed) return;
        await sleep(RETRY_DELAYS_MS[Math.min(failures++, RETRY_DELAYS_MS.length - 1)], undefined, {
          signal: this.stop.signal,
        }).catch(() => {});
      }
    }
  }

  close(): void {
    this.closed = true;
    this.uris.clear();
    this.stop.abort();
  }
}
