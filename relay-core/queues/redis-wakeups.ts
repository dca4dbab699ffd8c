// Redis pub/sub adapter of EventWakeups: a teammate's log grew in one process, the readers waiting in every other
// process read it now instead of at their next re-read. Only a hint: a lost message costs a re-read interval.
import { Redis } from 'ioredis';
import { LocalWakeups, type EventWakeups } from '../service/event-feed';

/** Publishes ARGV[2..] on channel ARGV[1], one message each; answers how many connections heard the last. */
const PUBLISH_EACH = "local n = 0 for i = 2, #ARGV do n = redis.call('PUBLISH', ARGV[1], ARGV[i]) end return n";

/**
 * After a publish no other process heard, hints stay in this process for this long: a relay alone (the usual `npm
 * start`) sends one a second instead of one an event. A process whose first reader subscribes meanwhile misses at
 * most this long of hints; its readers re-read by themselves (FEED_POLL_MS).
 */
const QUIET_MS = 1_000;

export class RedisWakeups implements EventWakeups {
  private readonly local = new LocalWakeups();
  private readonly channel: string;
  private subscriber: Redis | undefined;
  /** Until when no other process listens, as far as the last publish told (ms since the epoch). */
  private quietUntil = 0;

  constructor(private readonly opts: { redisUrl: string; publisher: Redis; prefix: string; quietMs?: number }) {
    this.channel = `${opts.prefix}:events:grew`;
  }

  notify(handles: readonly string[]): void {
    // This process's readers at once; the others through Redis (which may be down: they re-read by themselves). One
    // message per handle, as every relay version reads them, all from one command: a pipeline would cost more (ioredis
    // copies every script BullMQ defined on the connection into each new pipeline).
    this.local.notify(handles);
    if (handles.length === 0 || Date.now() < this.quietUntil) return;
    this.opts.publisher.eval(PUBLISH_EACH, 0, this.channel, ...handles).then(
      (heard) => {
        // This process's own subscriber (opened for its first reader) hears its hints too; nobody else did.
        if (Number(heard) - (this.subscriber ? 1 : 0) <= 0)
          this.quietUntil = Date.now() + (this.opts.quietMs ?? QUIET_MS);
      },
      () => {},
    );
  }

  subscribe(handle: string, wake: () => void): () => void {
    this.ensureSubscribed();
    return this.local.subscribe(handle, wake);
  }

  async close(): Promise<void> {
    await this.local.close();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  /** One subscriber connection per process, opened for the first reader; ioredis re-subscribes after a reconnect. */
  private ensureSubscribed(): void {
    if (this.subscriber) return;
    const subscriber = new Redis(this.opts.redisUrl, { maxRetriesPerRequest: null, lazyConnect: false });
    subscriber.on('error', () => {});
    subscriber.on('message', (_channel: string, handle: string) => this.local.notify([handle]));
    subscriber.subscribe(this.channel).catch(() => {});
    this.subscriber = subscriber;
  }
}
