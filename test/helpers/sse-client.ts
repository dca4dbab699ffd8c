// A small Server-Sent Events reader over fetch, for tests of GET /events and A2A streaming: it parses the stream
// as the EventSource spec does (id, event, data lines; comments) and lets a test wait for the next events.
import { waitUntil } from './wait-until';

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

export class SseStream {
  readonly events: SseEvent[] = [];
  comments = 0;
  ended = false;
  status = 0;
  error: unknown;
  private readonly controller = new AbortController();
  private reader: Promise<void> | undefined;

  /** Opens `url` (GET unless `init` says otherwise) and reads it in the background. */
  static async open(
    url: string,
    init: { headers?: Record<string, string>; method?: string; body?: string } = {},
  ): Promise<SseStream> {
    const stream = new SseStream();
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      headers: { accept: 'text/event-stream', ...init.headers },
      body: init.body,
      signal: stream.controller.signal,
    });
    stream.status = response.status;
    if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      stream.ended = true;
      stream.error = await response.text();
      return stream;
    }
    stream.reader = stream.read(response.body!);
    return stream;
  }

  /** The events that are not `ready` (the stream's opening position) or other control events. */
  dataEvents(except: readonly string[] = ['ready']): SseEvent[] {
    return this.events.filter((e) => !except.includes(e.event));
  }

  /** Waits until `count` events (besides `ready`) have arrived, and returns them. */
  async waitFor(count: number, what = `${count} events`, timeoutMs?: number): Promise<SseEvent[]> {
    await waitUntil(
      async () =>
        this.dataEvents().length >= count || (this.ended && !(this.dataEvents().length >= count) && this.fail(what)),
      what,
      timeoutMs,
    );
    return this.dataEvents();
  }

  /** Resolves when the server ended the stream. */
  async waitEnded(): Promise<void> {
    await waitUntil(async () => this.ended, 'the stream to end');
  }

  close(): void {
    this.controller.abort();
  }

  lastId(): string | undefined {
    return [...this.events].reverse().find((e) => e.id !== undefined)?.id;
  }

  private fail(what: string): never {
    throw new Error(`the stream ended before ${what}: ${JSON.stringify(this.events)} ${String(this.error ?? '')}`);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    let current: { id?: string; event?: string; data: string[] } = { data: [] };
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = buffer.search(/\r?\n/)) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + (buffer[newline] === '\r' ? 2 : 1));
          if (line === '') {
            if (current.data.length > 0 || current.event) {
              this.events.push({
                ...(current.id !== undefined ? { id: current.id } : {}),
                event: current.event ?? 'message',
                data: current.data.join('\n'),
              });
            }
            current = { data: [] };
          } else if (line.startsWith(':')) {
            this.comments += 1;
          } else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') current.id = value;
            else if (field === 'event') current.event = value;
            else if (field === 'data') current.data.push(value);
          }
        }
      }
    } catch (error) {
      this.error = error;
    } finally {
      this.ended = true;
    }
  }
}

/** Reads GET /events as a browser's EventSource would: on any end or refusal it reconnects with Last-Event-ID. */
export class ResumingSseReader {
  readonly events: SseEvent[] = [];
  reconnects = 0;
  private stopped = false;
  private current: SseStream | undefined;
  private lastId: string | undefined;

  constructor(
    private readonly url: () => string,
    private readonly key: string,
    private readonly since: string,
  ) {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.current?.close();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const stream = await SseStream.open(`${this.url()}/events?since=${this.since}`, {
          headers: { authorization: `Bearer ${this.key}`, ...(this.lastId ? { 'last-event-id': this.lastId } : {}) },
        });
        this.current = stream;
        let seen = 0;
        while (!stream.ended && !this.stopped) {
          for (const event of stream.events.slice(seen)) {
            if (event.id !== undefined) this.lastId = event.id;
            if (event.event !== 'ready') this.events.push(event);
          }
          seen = stream.events.length;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        for (const event of stream.events.slice(seen)) {
          if (event.id !== undefined) this.lastId = event.id;
          if (event.event !== 'ready') this.events.push(event);
        }
      } catch {
        // The relay is down: try again.
      }
      this.reconnects += 1;
      // A reconnecting client's pause, as EventSource's retry: pacing, not a wait for something to happen (tests wait
      // for the events themselves).
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
