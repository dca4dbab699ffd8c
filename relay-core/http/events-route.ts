// GET /events: the caller's own event log after a cursor, as Server-Sent Events (Accept: text/event-stream, with
// Last-Event-ID resume and heartbeats) or as one JSON long poll (?wait=seconds).
import type { Express, Request, Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AgentDoc } from '../domain/documents';
import { RelayError, invalidParams } from '../domain/errors';
import { CURSOR_PATTERN, FEED_POLL_MS, type EventFeed, type FeedEvent } from '../service/event-feed';

export const EVENTS_MAX_WAIT_SECONDS = 60;
const PAGE_DEFAULT = 100;
const PAGE_MAX = 200;
export const HEARTBEAT_MS = 15_000;

const cursorSchema = z
  .string()
  .regex(CURSOR_PATTERN, 'must be a cursor from this relay (a whole number, as an event id or `cursor` gave it)');

const eventsQuery = z
  .object({
    since: cursorSchema.optional(),
    wait: z
      .string()
      .regex(/^[0-9]{1,3}$/, `must be a whole number of seconds, 0–${EVENTS_MAX_WAIT_SECONDS}`)
      .transform(Number)
      .pipe(z.number().max(EVENTS_MAX_WAIT_SECONDS, `must be at most ${EVENTS_MAX_WAIT_SECONDS} seconds`))
      .optional(),
    limit: z
      .string()
      .regex(/^[0-9]{1,3}$/, `must be a whole number, 1–${PAGE_MAX}`)
      .transform(Number)
      .pipe(z.number().min(1, `must be at least 1`).max(PAGE_MAX, `must be at most ${PAGE_MAX}`))
      .optional(),
  })
  .strict();

/** The open streams and polls of this process, so a shutdown can end them instead of waiting for their clients. */
export class OpenEventStreams {
  private readonly open = new Map<AbortController, Promise<void>>();
  private closed = false;

  /** Call as the request arrives: the signal aborts at closeAll, and is already aborted when it came after. */
  track(res: Response): AbortSignal {
    const controller = new AbortController();
    // A closed server still reads new requests on keep-alive connections that were busy when it closed.
    if (this.closed) {
      controller.abort();
      return controller.signal;
    }
    const ended = new Promise<void>((resolve) => {
      res.once('finish', resolve);
      res.once('close', resolve);
    });
    this.open.set(controller, ended);
    res.on('close', () => {
      controller.abort();
      this.open.delete(controller);
    });
    return controller.signal;
  }

  /** How many streams and polls are open now (the relay_event_streams_open gauge). */
  get size(): number {
    return this.open.size;
  }

  /** Ends every stream and poll; resolves once their answers are sent (at most `withinMs`), so their sockets are idle. */
  async closeAll(withinMs = 2_000): Promise<void> {
    this.closed = true;
    const ended = [...this.open.values()];
    for (const controller of this.open.keys()) controller.abort();
    this.open.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(ended), new Promise((resolve) => (timer = setTimeout(resolve, withinMs)))]);
    clearTimeout(timer);
  }
}

export interface EventsRouteDeps {
  feed: EventFeed;
  authenticate(req: Request): Promise<AgentDoc>;
  log: Logger;
  streams: OpenEventStreams;
  heartbeatMs?: number;
  pollMs?: number;
}

/** One event as SSE; unnamed (a plain `message`, which a page's EventSource.onmessage hears) when `named` is false. */
function sseEvent(event: FeedEvent, named = true): string {
  return `id: ${event.cursor}\n${named ? `event: ${event.type}\n` : ''}data: ${JSON.stringify(event)}\n\n`;
}

export function mountEventsRoute(app: Express, deps: EventsRouteDeps): void {
  app.get('/events', async (req, res) => {
    // Tracked before any await: a stop while it authenticates or finds its start ends it as soon as those return.
    const signal = deps.streams.track(res);
    const agent = await deps.authenticate(req);
    const parsed = eventsQuery.safeParse(req.query);
    if (!parsed.success) throw invalidParams(parsed.error.issues, 'query');
    const query = parsed.data;
    const stream = (req.get('accept') ?? '').includes('text/event-stream');
    const lastEventId = req.get('last-event-id');
    if (lastEventId !== undefined && stream && !CURSOR_PATTERN.test(lastEventId.trim())) {
      throw new RelayError(
        'invalid_params',
        'header.last-event-id: must be a cursor from this relay (an event id of this stream)',
      );
    }
    // A reconnecting EventSource sends Last-Event-ID and the URL it first opened: the header is the newer cursor.
    const resume = stream && lastEventId !== undefined;
    const from = await deps.feed.start(
      agent.handle,
      resume ? lastEventId!.trim() : query.since,
      resume ? 'header.last-event-id' : 'query.since',
    );
    const limit = query.limit ?? PAGE_DEFAULT;
    if (stream) return streamEvents(req, res, deps, agent.handle, from, limit, signal);

    let page;
    try {
      page = await deps.feed.wait(agent.handle, from, limit, (query.wait ?? 0) * 1000, signal);
    } catch {
      throw new RelayError(
        'unavailable',
        'The relay cannot read your events right now (its database is unreachable); retry shortly',
      );
    }
    res.setHeader('Cache-Control', 'no-store');
    res.json({ events: page.events, cursor: page.cursor });
  });
}

/** Streams `handle`'s events after `from` until `signal` aborts (GET /events; the web inbox's /inbox/events, unnamed). */
export async function streamEvents(
  _req: Request,
  res: Response,
  deps: Omit<EventsRouteDeps, 'authenticate'>,
  handle: string,
  from: string,
  limit: number,
  signal: AbortSignal,
  named = true,
): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let cursor = from;
  const write = async (chunk: string) => {
    if (!res.write(chunk))
      await new Promise<void>((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
  };
  // The stream's position first, as an event id: a client that reconnects before any event resumes from here.
  await write(`retry: 2000\nid: ${cursor}\nevent: ready\ndata: ${JSON.stringify({ cursor })}\n\n`);
  let wake: () => void = () => {};
  const hint = { woken: false };
  const unsubscribe = deps.feed.subscribe(handle, () => {
    hint.woken = true;
    wake();
  });
  const heartbeat = setInterval(() => void write(': heartbeat\n\n'), deps.heartbeatMs ?? HEARTBEAT_MS);
  signal.addEventListener('abort', () => wake());
  try {
    while (!signal.aborted) {
      hint.woken = false;
      let more = false;
      try {
        const page = await deps.feed.read(handle, cursor, limit);
        for (const event of page.events) await write(sseEvent(event, named));
        cursor = page.cursor;
        more = page.events.length >= limit;
      } catch (error) {
        // The database is away: keep the stream, read again at the next interval.
        deps.log.warn({ handle, err: (error as Error).message }, 'event stream read failed; retrying');
      }
      if (more || hint.woken || signal.aborted) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deps.pollMs ?? FEED_POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = () => {};
    }
  } finally {
    clearInterval(heartbeat);
    unsubscribe();
    res.end();
  }
}
