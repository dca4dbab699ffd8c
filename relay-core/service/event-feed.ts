// The event feed: each thread event goes into both participants' event logs (store/event-log.ts) as the outbox
// publishes it, and readers wait on a teammate's log after a cursor, woken by a hint and re-reading as a fallback.
import type { Logger } from 'pino';
import type { OutboxEvent } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { EventLog, LoggedEvent } from '../store/event-log';
import type { EventJobState, EventPublisher, EventThread } from './event-publisher';
import { jobKey } from '../store/outbox-ledger';
import type { QueueName } from '../queues/bullmq-queues';
import type { ThreadSearchIndexer } from './thread-search-index';

const WEBHOOKS: QueueName = 'webhooks';

/** Port: tells every relay process that a teammate's log grew (Redis pub/sub); a hint only, never the record. */
export interface EventWakeups {
  /** The logs of `handles` may have grown (one event's participants: told together, in one round trip to Redis). */
  notify(handles: readonly string[]): void;
  /** Calls `wake` whenever `handle`'s log may have grown; returns the unsubscribe. */
  subscribe(handle: string, wake: () => void): () => void;
  close(): Promise<void>;
}

/** A process-local EventWakeups (one process, or tests): the same calls without Redis. */
export class LocalWakeups implements EventWakeups {
  private readonly listeners = new Map<string, Set<() => void>>();

  notify(handles: readonly string[]): void {
    for (const handle of handles) for (const wake of this.listeners.get(handle) ?? []) wake();
  }

  subscribe(handle: string, wake: () => void): () => void {
    let set = this.listeners.get(handle);
    if (!set) this.listeners.set(handle, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.listeners.get(handle) === set) this.listeners.delete(handle);
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}

/** An event as a reader gets it: the outbox event's fields (whatever its type carries), its thread and its cursor. */
export interface FeedEvent {
  cursor: string;
  event_id: string;
  type: string;
  thread_id: string;
  at: string;
  [field: string]: unknown;
}

export interface FeedPage {
  events: FeedEvent[];
  /** Where the next read starts: the last event's cursor, or the one asked after when nothing came. */
  cursor: string;
}

/** A cursor as clients send it: a position in their own log. */
export const CURSOR_PATTERN = /^(0|[1-9][0-9]{0,14})$/;

/** How often a waiting reader re-reads its log when no hint came (Redis down, a hint lost). */
export const FEED_POLL_MS = 2_000;

export function feedEvent(logged: LoggedEvent): FeedEvent {
  const { id, at, ...rest } = logged.event;
  return {
    cursor: String(logged.seq),
    event_id: id,
    thread_id: logged.thread_id,
    ...rest,
    type: logged.event.type,
    at: at.toISOString(),
  };
}

export class EventFeed {
  constructor(
    private readonly deps: {
      store: { eventLog: Pick<EventLog, 'record' | 'head' | 'read'> };
      wakeups: EventWakeups;
      log: Logger;
      pollMs?: number;
    },
  ) {}

  /**
   * Records `events` of `thread` into the logs of its sender and recipient; throws when a log write failed. An
   * unclaimed handoff's `to` is its target (`role:frontend`), which has no log: its candidates get its thread.created.
   * The recipient of a create held for approval hears of nothing yet.
   */
  async record(thread: EventThread, events: readonly OutboxEvent[]): Promise<void> {
    const candidates = (thread.candidates?.length ?? 0) > 1 ? thread.candidates! : [];
    const owed = new Map<string, OutboxEvent[]>();
    for (const event of events) {
      const handles = [
        thread.from,
        ...(thread.to.includes(':') || thread.hidden_from_recipient ? [] : [thread.to]),
        ...(event.type === 'thread.created' ? candidates : []),
      ];
      for (const handle of new Set(handles)) owed.set(handle, [...(owed.get(handle) ?? []), event]);
    }
    const handles = [...owed.keys()];
    const written = await Promise.allSettled(
      handles.map(async (handle) => {
        for (const event of owed.get(handle)!) await this.deps.store.eventLog.record(handle, thread._id, event);
      }),
    );
    // The logs that got their events are told at once, together; a failed write throws (the job retries it).
    this.deps.wakeups.notify(handles.filter((_, i) => written[i]!.status === 'fulfilled'));
    const failed = written.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Where a reader of `handle`'s log starts: `since` when it is a cursor of this log, now without one. A malformed
   * cursor, or one past the end of the log, is invalid_params naming `field`; a database that does not answer is
   * unavailable.
   */
  async start(handle: string, since: string | undefined, field: string): Promise<string> {
    if (since !== undefined && !CURSOR_PATTERN.test(since)) {
      throw new RelayError(
        'invalid_params',
        `${field}: must be a cursor from this relay (a whole number, as an event id or \`cursor\` gave it)`,
      );
    }
    let head: string;
    try {
      head = await this.head(handle);
    } catch {
      throw new RelayError(
        'unavailable',
        'The relay cannot read your events right now (its database is unreachable); retry shortly',
      );
    }
    if (since !== undefined && Number(since) > Number(head)) {
      throw new RelayError(
        'invalid_params',
        `${field}: cursor ${since} is past the end of your events (the latest is ${head}); use a cursor this relay gave you`,
      );
    }
    return since ?? head;
  }

  /** The cursor of "now" in `handle`'s log. */
  async head(handle: string): Promise<string> {
    return String(await this.deps.store.eventLog.head(handle));
  }

  async read(handle: string, after: string, limit: number): Promise<FeedPage> {
    const page = await this.deps.store.eventLog.read(handle, Number(after), limit);
    return { events: page.events.map(feedEvent), cursor: String(page.cursor) };
  }

  /**
   * The events after `after`, as soon as there is one, or an empty page with the same cursor once `waitMs` has
   * passed (or `signal` aborts). A read error is thrown to the caller.
   */
  async wait(handle: string, after: string, limit: number, waitMs: number, signal?: AbortSignal): Promise<FeedPage> {
    const deadline = Date.now() + waitMs;
    const hint = { woken: false };
    let wake: () => void = () => {};
    const unsubscribe = this.deps.wakeups.subscribe(handle, () => {
      hint.woken = true;
      wake();
    });
    const onAbort = () => wake();
    signal?.addEventListener('abort', onAbort);
    try {
      for (;;) {
        hint.woken = false;
        const page = await this.read(handle, after, limit);
        const left = deadline - Date.now();
        if (page.events.length > 0 || page.cursor !== after || left <= 0 || signal?.aborted) return page;
        if (hint.woken) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, this.deps.pollMs ?? FEED_POLL_MS));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = () => {};
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      unsubscribe();
    }
  }

  /** Subscribes to hints for `handle` (the SSE stream waits on them itself). */
  subscribe(handle: string, wake: () => void): () => void {
    return this.deps.wakeups.subscribe(handle, wake);
  }
}

/** The outbox's pending key of an event's entries in its participants' event logs and its words in their search
 * (`events:<event id>`). */
export const EVENT_LOGS = 'events';

/**
 * The outbox's publisher: each event goes into its participants' event logs first (GET /events and `check_inbox`
 * read them), and its words into their web inbox search, in the request that wrote it, then onto its queues — the `webhooks` job only when someone hears of
 * it by webhook or push (`hears`), so an event nobody does costs no job. Each log entry and each job left out is
 * marked finished on the thread (`finished`); a log write that failed stays pending, the publish throws, and the
 * outbox sweep records it again (twice is once: event-log.ts).
 */
export class RecordingEventPublisher implements EventPublisher {
  constructor(
    private readonly deps: {
      inner: EventPublisher;
      feed: Pick<EventFeed, 'record'>;
      /** The web inbox's search: the words an event adds (thread-search-index.ts). */
      search?: Pick<ThreadSearchIndexer, 'index'>;
      hears: (thread: EventThread, event: OutboxEvent) => Promise<boolean>;
      finished: (threadId: string, queue: string, eventId: string) => void;
    },
  ) {}

  get queues(): readonly string[] {
    return [EVENT_LOGS, ...this.deps.inner.queues];
  }

  /** The log entries are written again by every publish the sweep makes (state `missing`): twice is once. */
  jobStates(eventId: string, queues: readonly string[]): Promise<EventJobState[]> {
    const delivery = queues.filter((queue) => queue !== EVENT_LOGS);
    return this.deps.inner
      .jobStates(eventId, delivery)
      .then((states) => queues.map((queue) => (queue === EVENT_LOGS ? 'missing' : states[delivery.indexOf(queue)]!)));
  }

  async publish(thread: EventThread, events: readonly OutboxEvent[], skip?: ReadonlySet<string>): Promise<void> {
    const { inner, feed, search, hears, finished } = this.deps;
    const words = (event: OutboxEvent) =>
      search?.index({
        type: event.type,
        thread_id: thread._id,
        ...(event.message_id ? { message_id: event.message_id } : {}),
        ...(thread.version !== undefined ? { version: thread.version } : {}),
      });
    const logged = Promise.all([feed.record(thread, events), ...events.map(words)]).then(
      () => events.forEach((event) => finished(thread._id, EVENT_LOGS, event.id)),
      (error: unknown) => error,
    );
    const unheard = new Set(skip);
    if (inner.queues.includes(WEBHOOKS))
      for (const event of events) {
        if (await hears(thread, event)) continue;
        unheard.add(jobKey(WEBHOOKS, event.id));
        finished(thread._id, WEBHOOKS, event.id);
      }
    await inner.publish(thread, events, unheard);
    const failed = await logged;
    if (failed) throw failed;
  }
}
