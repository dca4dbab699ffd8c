// Redis pub/sub adapter of EventWakeups: a teammate's log grew in one process, the readers waiting in every other
// process read it now instead of at their next re-read. Only a hint: a lost message costs a re-read interval.
import { Redis } from 'ioredis';
import { LocalWakeups, type EventWakeups } from '../service/event-feed';

/** Publishes ARGV[2..] on channel ARGV[1], one message each. */
const PUBLISH_EACH = "for i = 2, #ARGV do redis.call('PUBLISH', ARGV[1], ARGV[i]) end";

export class RedisWakeups implements EventWakeups {
  private readonly local = new LocalWakeups();
  private readonly channel: string;
  private subscriber: Redis | undefined;

  constructor(private readonly opts: { redisUrl: string; publisher: Redis; prefix: string }) {
    this.channel = `${opts.prefix}:events:grew`;
  }

  notify(handles: readonly string[]): void {
    // This process's readers at once; the others through Redis (which may be down: they re-read by themselves). One
    // message per handle, as every relay version reads them, all from one command: a pipeline would cost more (ioredis
    // copies every script BullMQ defined on the connection into each new pipeline).
    this.local.notify(handles);
    if (handles.length === 0) return;
    this.opts.publisher.eval(PUBLISH_EACH, 0, this.channel, ...handles).catch(() => {});
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
