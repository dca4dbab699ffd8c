// A2A v1.0 streaming on POST /a2a: SendStreamingMessage and SubscribeToTask answer Server-Sent Events, each a JSON-RPC
// response whose result is a StreamResponse: the Task first, then a statusUpdate for every event of the thread (read
// from the caller's event log after the cursor taken before the task was read), until the task is finished.
// Not @a2a-js/sdk's sendMessageStream/resubscribe: they follow only this process's ExecutionEventBus (resubscribe with none sends the task and ends), where a task here changes from Slack, MCP or another process, so the stream follows the caller's event log.
import type { Logger } from 'pino';
import { RelayError } from '../domain/errors';
import type { ThreadStatus } from '../domain/schemas';
import { FEED_POLL_MS, type EventFeed, type FeedEvent } from '../service/event-feed';
import { getParams, sendHandoff, taskIdOf, v1SendInput, v1SentTask } from './a2a-methods';
import { v1Task } from './a2a-task';
import type { MethodContext } from './method';
import { parseParams } from './params';

/** A stream opened: what to send first, and where in the caller's event log to follow the thread from. */
export interface OpenedTaskStream {
  threadId: string;
  cursor: string;
  first: Record<string, unknown>;
  /** The task's state in `first`: updates carry it forward from there. */
  state: string;
  /** When the thread last changed as of `first`: events up to then are already in it. */
  asOf: string;
  finished: boolean;
}

export type StreamingMethod = (ctx: MethodContext, params: unknown) => Promise<OpenedTaskStream>;

const FINISHED: ReadonlySet<ThreadStatus> = new Set(['completed', 'declined', 'cancelled', 'expired']);

/** The state an event put the thread in; events that change no status (messages, later kinds) show the current one. */
const STATE_OF_EVENT: Record<string, string> = {
  'thread.created': 'TASK_STATE_SUBMITTED',
  'thread.accepted': 'TASK_STATE_WORKING',
  'thread.completed': 'TASK_STATE_COMPLETED',
  'thread.declined': 'TASK_STATE_REJECTED',
  'thread.cancelled': 'TASK_STATE_CANCELED',
  'thread.expired': 'TASK_STATE_CANCELED',
};
const FINISHING_EVENTS: ReadonlySet<string> = new Set([
  'thread.completed',
  'thread.declined',
  'thread.cancelled',
  'thread.expired',
]);

function feedOf(ctx: MethodContext): EventFeed {
  if (!ctx.feed)
    throw new RelayError('method_not_found', 'Streaming is not available on this relay (it keeps no event logs)');
  return ctx.feed;
}

const subscribeParams = getParams.omit({ historyLength: true }).strict();

export const A2A_STREAMING_METHODS: Record<string, StreamingMethod> = {
  /** SendMessage, then the task's updates as they happen. */
  async SendStreamingMessage(ctx, params) {
    const feed = feedOf(ctx);
    const input = v1SendInput(params);
    // The cursor first: nothing that happens to the new task after it is read back can fall between the two.
    const cursor = await feed.head(ctx.caller.handle);
    const sent = await sendHandoff(ctx, input);
    const task = v1SentTask(sent, input.historyLength);
    // A task waiting for its recipient is interrupted (input required): the stream ends with it, as A2A ends one.
    if (!('view' in sent))
      return {
        threadId: sent.draft._id,
        cursor,
        first: { task },
        state: stateOf(task),
        asOf: sent.draft.updated_at.toISOString(),
        finished: true,
      };
    const { view } = sent;
    return {
      threadId: view.thread_id,
      cursor,
      first: { task },
      state: stateOf(task),
      asOf: view.updated_at,
      finished: FINISHED.has(view.status),
    };
  },
  /** The task as it is now, then its updates; a finished task has none (thread_terminal). */
  async SubscribeToTask(ctx, params) {
    const feed = feedOf(ctx);
    const p = parseParams(subscribeParams, params);
    const cursor = await feed.head(ctx.caller.handle);
    const view = await ctx.reads.threadViewFor(ctx.caller, taskIdOf(p.id));
    if (FINISHED.has(view.status)) {
      throw new RelayError(
        'thread_terminal',
        `Task ${p.id} is already ${view.status}: there is nothing to subscribe to; read it with GetTask`,
      );
    }
    const task = v1Task(view);
    return {
      threadId: view.thread_id,
      cursor,
      first: { task },
      state: stateOf(task),
      asOf: view.updated_at,
      finished: false,
    };
  },
};

function stateOf(task: Record<string, unknown>): string {
  return (task.status as { state: string }).state;
}

export function isStreamingMethod(name: string): boolean {
  return Object.hasOwn(A2A_STREAMING_METHODS, name);
}

/**
 * Sends `{ statusUpdate }` for each event of the stream's thread after its cursor (the thread.created a
 * SendStreamingMessage already answered with its task is left out) and returns once the task is finished or
 * `signal` aborts. `heartbeat` is called when nothing happened for a while (the caller writes an SSE comment).
 */
export async function followTask(
  ctx: MethodContext,
  opened: OpenedTaskStream,
  send: (result: Record<string, unknown>) => Promise<void>,
  heartbeat: () => Promise<void>,
  signal: AbortSignal,
  log: Logger,
  heartbeatMs: number,
): Promise<void> {
  const feed = feedOf(ctx);
  let cursor = opened.cursor;
  // The state each event left the task in, followed from the task the stream opened with: events reach the log a
  // moment after their write, so the thread read now may already be further along.
  let state = opened.state;
  let lastWrite = Date.now();
  while (!signal.aborted) {
    let events: FeedEvent[];
    try {
      const page = await feed.wait(ctx.caller.handle, cursor, 100, heartbeatMs, signal);
      cursor = page.cursor;
      // An event may reach the log a moment after the task was read: one the task already shows is left out.
      events = page.events.filter(
        (e) => e.thread_id === opened.threadId && e.type !== 'thread.created' && e.at > opened.asOf,
      );
      if (events.length === 0 && Date.now() - lastWrite >= heartbeatMs && !signal.aborted) {
        await heartbeat();
        lastWrite = Date.now();
      }
    } catch (error) {
      log.warn({ thread_id: opened.threadId, err: (error as Error).message }, 'task stream read failed; retrying');
      await new Promise((resolve) => setTimeout(resolve, FEED_POLL_MS));
      continue;
    }
    for (const event of events) {
      state = STATE_OF_EVENT[event.type] ?? state;
      // A finishing event leaves the thread as it stays: its status carries the result or the reason.
      const status = FINISHING_EVENTS.has(event.type)
        ? v1Task(await ctx.reads.threadViewFor(ctx.caller, opened.threadId)).status
        : { state, timestamp: event.at };
      await send({
        statusUpdate: {
          taskId: opened.threadId,
          contextId: opened.threadId,
          status,
          metadata: {
            handoff_event: {
              type: event.type,
              event_id: event.event_id,
              at: event.at,
              by: event.by,
              via: event.via,
              ...(event.message_id ? { message_id: event.message_id } : {}),
            },
          },
        },
      });
      lastWrite = Date.now();
      if (FINISHING_EVENTS.has(event.type)) return;
    }
  }
}
