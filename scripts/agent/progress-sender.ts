// A run's output on its way to the relay: buffered, cut to bounded batches, one batch per interval, numbered so a
// retried batch is recorded once. Output beyond what the batches can carry is left out and said so.
import { RunnerCallError, type RunnerClient } from './runner-client';

/** How much unsent output is kept, in batches: past it the oldest is left out (a flood cannot grow the runner). */
const BUFFERED_BATCHES = 4;
/** The last output kept for the run's report (a failure's tail, a success without a report file). */
export const TAIL_CHARS = 4_000;

export class ProgressSender {
  private buffer = '';
  private leftOut = 0;
  private seq: number;
  private sending: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private tailText = '';
  /** Set when the relay said this lease no longer holds the run. */
  lost = false;

  constructor(
    private readonly opts: {
      client: RunnerClient;
      runId: string;
      leaseId: string;
      firstSeq: number;
      intervalMs: number;
      maxChars: number;
      onLost: () => void;
      log: (line: string) => void;
    },
  ) {
    this.seq = opts.firstSeq;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), Math.max(this.opts.intervalMs, 100));
    this.timer.unref();
  }

  push(chunk: string): void {
    this.tailText = (this.tailText + chunk).slice(-TAIL_CHARS);
    this.buffer += chunk;
    const cap = this.opts.maxChars * BUFFERED_BATCHES;
    if (this.buffer.length > cap) {
      this.leftOut += this.buffer.length - cap;
      this.buffer = this.buffer.slice(-cap);
    }
  }

  get tail(): string {
    return this.tailText;
  }

  private tick(): Promise<void> {
    if (this.sending || this.lost || (this.buffer.length === 0 && this.leftOut === 0))
      return this.sending ?? Promise.resolve();
    this.sending = this.sendOne().finally(() => (this.sending = null));
    return this.sending;
  }

  private async sendOne(): Promise<void> {
    const marker = this.leftOut > 0 ? `[… ${this.leftOut.toLocaleString('en')} characters of output left out …]\n` : '';
    const room = this.opts.maxChars - marker.length;
    const text = marker + this.buffer.slice(0, room);
    this.buffer = this.buffer.slice(room);
    this.leftOut = 0;
    try {
      await this.opts.client.call('runs/progress', {
        run_id: this.opts.runId,
        lease_id: this.opts.leaseId,
        seq: this.seq,
        text,
      });
      this.seq += 1;
    } catch (error) {
      if (error instanceof RunnerCallError && error.code === 'conflict') {
        this.lost = true;
        this.opts.onLost();
        return;
      }
      // Anything else (a refused batch) is logged and skipped: the output is only progress, never the result.
      this.opts.log(`run ${this.opts.runId}: progress batch ${this.seq} not recorded (${(error as Error).message})`);
      if (
        error instanceof RunnerCallError &&
        error.code === 'invalid_params' &&
        /params\.seq: must be (\d+)/.test(error.message)
      ) {
        this.seq = Number(/params\.seq: must be (\d+)/.exec(error.message)![1]);
      }
    }
  }

  /** Stops the interval and sends what is left in at most `batches` more batches. */
  async flush(batches = 3): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sending;
    for (let i = 0; i < batches && !this.lost && (this.buffer.length > 0 || this.leftOut > 0); i += 1)
      await this.tick();
  }
}
