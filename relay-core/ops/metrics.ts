// Prometheus metrics for GET /metrics: one registry per relay, fed by worker events, HTTP responses and a scrape-time count.
import type { Job, Worker } from 'bullmq';
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The delivery channel a queue serves, as the latency histogram labels it; queues without one are not deliveries. */
const CHANNEL_OF_QUEUE: Record<string, string> = { slack: 'slack', 'slack-sync': 'slack', webhooks: 'webhook' };

/** Seconds; deliveries go from milliseconds (hot queue) to minutes (retries with back-off). */
const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/**
 * Processor results that mean something reached its receiver: a Slack post or update, a webhook answered 2xx.
 * Anything else (skipped, a webhook event only fanned out to per-endpoint jobs, a 410) is not a delivery.
 */
const DELIVERED = new Set(['posted', 'updated', 'delivered']);

export interface RelayMetricsDeps {
  /** Events whose delivery jobs have not finished (the outbox entries); counted when scraped. */
  outboxBacklog: () => Promise<number>;
  /** The event streams and long polls this process holds open (GET /events); counted when scraped. */
  openEventStreams?: () => number;
  /** The MCP sessions (Mcp-Session-Id on /mcp) this process holds. */
  openMcpSessions?: () => number;
}

export class RelayMetrics {
  readonly registry = new Registry();
  private readonly jobsCompleted: Counter<'queue'>;
  private readonly jobsFailed: Counter<'queue'>;
  private readonly jobsRetried: Counter<'queue'>;
  private readonly jobsStalled: Counter<'queue'>;
  private readonly deliveryLatency: Histogram<'channel'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;

  constructor(deps: RelayMetricsDeps) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.jobsCompleted = new Counter({
      name: 'relay_jobs_completed_total',
      help: 'Jobs this process finished successfully',
      labelNames: ['queue'],
      registers,
    });
    this.jobsFailed = new Counter({
      name: 'relay_jobs_failed_total',
      help: 'Jobs this process failed for good (attempts exhausted or unrecoverable): they wait in the failed list',
      labelNames: ['queue'],
      registers,
    });
    this.jobsRetried = new Counter({
      name: 'relay_jobs_retried_total',
      help: 'Failed attempts in this process that BullMQ will retry',
      labelNames: ['queue'],
      registers,
    });
    this.jobsStalled = new Counter({
      name: 'relay_jobs_stalled_total',
      help: 'Jobs this process found stalled (their worker died or lost its lock) and put back on the queue',
      labelNames: ['queue'],
      registers,
    });
    this.deliveryLatency = new Histogram({
      name: 'relay_delivery_latency_seconds',
      help: 'From the event being created on the thread to its delivery (Slack DM posted or updated, webhook accepted)',
      labelNames: ['channel'],
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'relay_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern (not the raw URL) and status',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'relay_outbox_backlog_threads',
      help: 'Events whose delivery jobs have not finished yet (the outbox), counted at scrape time',
      registers,
      async collect() {
        this.set(await deps.outboxBacklog());
      },
    });
    const openStreams = deps.openEventStreams;
    if (openStreams) {
      new Gauge({
        name: 'relay_event_streams_open',
        help: 'Event streams and long polls (GET /events) this process holds open, counted at scrape time',
        registers,
        collect() {
          this.set(openStreams());
        },
      });
    }
    const mcpSessions = deps.openMcpSessions;
    if (mcpSessions) {
      new Gauge({
        name: 'relay_mcp_sessions_open',
        help: 'MCP sessions (Mcp-Session-Id on /mcp) this process holds, counted at scrape time',
        registers,
        collect() {
          this.set(mcpSessions());
        },
      });
    }
  }

  /** Counts the worker's outcomes under its queue name; call once per worker this process runs. */
  watchWorker(worker: Worker): void {
    const queue = worker.name;
    const channel = CHANNEL_OF_QUEUE[queue];
    worker.on('completed', (job: Job, result: unknown) => {
      this.jobsCompleted.inc({ queue });
      if (!channel || typeof result !== 'string' || !DELIVERED.has(result)) return;
      const createdAt = eventCreatedAt(job);
      if (createdAt !== undefined)
        this.deliveryLatency.observe({ channel }, Math.max(0, Date.now() - createdAt) / 1000);
    });
    worker.on('failed', (job: Job | undefined) => {
      // BullMQ emits 'failed' for every failed attempt; finishedOn is set only when the job will not run again.
      if (job && !job.finishedOn) this.jobsRetried.inc({ queue });
      else this.jobsFailed.inc({ queue });
    });
    worker.on('stalled', () => this.jobsStalled.inc({ queue }));
  }

  /** Express middleware: times every request, labelled by the matched route pattern once the response is sent. */
  httpMiddleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const end = this.httpDuration.startTimer();
      res.once('finish', () => end({ method: req.method, route: routePattern(req), status: String(res.statusCode) }));
      next();
    };
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** When the event behind a job was created: `at` in the job data, else when it was queued. */
function eventCreatedAt(job: Job): number | undefined {
  const at = (job.data as { at?: unknown } | undefined)?.at;
  if (typeof at === 'string') {
    const ms = Date.parse(at);
    if (Number.isFinite(ms)) return ms;
  }
  return typeof job.timestamp === 'number' ? job.timestamp : undefined;
}

/** Sub-apps mounted under a prefix: their routes are counted under the prefix (their inner patterns are theirs). */
const MOUNTED_PREFIXES = ['/admin/queues'];

/**
 * The route pattern of a request, bounded in number: express's matched pattern ("/admin/agents/:handle/keys"),
 * "<prefix>/*" for a mounted sub-app (bull-board), or "unmatched" — never the raw URL.
 */
export function routePattern(req: Request): string {
  const path = req.originalUrl.split('?')[0] ?? '';
  const mounted = MOUNTED_PREFIXES.find((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  if (mounted) return `${mounted}/*`;
  const route = (req as Request & { route?: { path?: unknown } }).route;
  if (route && typeof route.path === 'string') return route.path;
  return 'unmatched';
}
