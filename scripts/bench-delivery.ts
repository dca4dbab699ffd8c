// Bench phase `delivery` (BENCH_ONLY=delivery): handoffs at a sustained rate → the DM at a fake Slack and the
// recipient's verified webhook (a loopback receiver) getting thread.created, both in one run of the relay as its own
// process (as `npm start` starts it), beside a bare BullMQ baseline (queue.add → worker → one HTTP POST to a
// loopback server) at the same rate, in the same run.
// Target (PERFORMANCE.md, issue 12): delivery p99 ≤ 3× the baseline's, for the DM and for the webhook (issue 6 had 2×).
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue, Worker } from 'bullmq';
import { redisConnection } from '../relay-core/queues/bullmq-queues';
import { startFakeSlack } from './fake-slack/fake-slack-api';
import { echoChallenge, WebhookReceiver } from './webhook-receiver';
import { printTable, summarize, type Figures, type PhaseServers, type Row } from './bench-measure';
import { cpuMeter, startRelayProcess } from './bench-process';

export interface DeliveryBenchOptions extends PhaseServers {
  keyPepper: string;
  /** The bench's own FerretDB (null with MONGODB_URL): its CPU counts with the relay's. */
  ferretPid: number | null;
  /** Handoffs per second, sent open-loop (a slow relay does not slow the sender). */
  rate: number;
  count: number;
}

/** The baseline worker's concurrency: the relay's `slack` worker's (startWorker's default; its `webhooks` worker runs 32, which at this phase's rate makes no difference). */
const WORKER_CONCURRENCY = 8;
const WARMUP = 20;

/** Sends `count` items at `rate` per second; resolves when every send has been started and settled. */
async function openLoop(rate: number, count: number, send: (i: number) => Promise<void>): Promise<void> {
  const started = Date.now();
  const sends: Promise<void>[] = [];
  for (let i = 0; i < count; i += 1) {
    const due = started + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sends.push(send(i));
  }
  await Promise.all(sends);
}

async function waitFor(
  what: string,
  check: () => boolean,
  timeoutMs: number,
  status: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} ${status()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function figures(latencies: number[], elapsedMs: number, cpuMs: number): Figures {
  return summarize({ latenciesMs: latencies, elapsedMs, cpuMs });
}

/**
 * Baseline: queue.add → BullMQ worker → one HTTP POST to a loopback server; latency from add to the POST arriving
 * (the paths phase runs it beside the Slack delivery at each size too).
 */
export async function bareDeliveryBaseline(
  opts: { redisUrl: string; rate: number },
  prefix: string,
  count: number,
): Promise<Figures> {
  const arrivals = new Map<number, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { n } = JSON.parse(Buffer.concat(chunks).toString()) as { n: number };
      arrivals.set(n, Date.now());
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const producer = redisConnection(opts.redisUrl, 'producer');
  const workerConnection = redisConnection(opts.redisUrl, 'worker');
  const queue = new Queue('bench-delivery-baseline', { connection: producer, prefix });
  const worker = new Worker(
    'bench-delivery-baseline',
    async (job) => {
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(job.data),
      });
      await response.arrayBuffer();
    },
    { connection: workerConnection, prefix, concurrency: WORKER_CONCURRENCY },
  );
  try {
    const sentAt = new Map<number, number>();
    const run = async (from: number, n: number) => {
      await openLoop(opts.rate, n, async (i) => {
        const id = from + i;
        sentAt.set(id, Date.now());
        await queue.add('deliver', { n: id }, { jobId: `b${id}`, removeOnComplete: true });
      });
      await waitFor('baseline deliveries', () => arrivals.size >= from + n, 60_000);
    };
    await run(0, WARMUP);
    const cpu = process.cpuUsage();
    const t0 = Date.now();
    await run(WARMUP, count);
    const used = process.cpuUsage(cpu);
    const latencies = Array.from({ length: count }, (_, i) => arrivals.get(WARMUP + i)! - sentAt.get(WARMUP + i)!);
    return figures(latencies, Date.now() - t0, (used.user + used.system) / 1000);
  } finally {
    await worker.close();
    await queue.close();
    producer.disconnect();
    workerConnection.disconnect();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * A loopback webhook receiver that echoes the challenge and notes when each thread's thread.created arrives
 * (by thread id). `created` is what the bench reads; the receiver keeps no request bodies.
 */
export async function startTimedReceiver(): Promise<{
  receiver: WebhookReceiver;
  created: Map<string, number>;
  events: () => number;
  close: () => Promise<void>;
}> {
  const receiver = await new WebhookReceiver().start();
  const created = new Map<string, number>();
  let events = 0;
  receiver.answer = (request) => {
    const at = Date.now();
    receiver.requests.length = 0;
    if (request.json?.type !== 'endpoint.challenge') events += 1;
    if (request.json?.type === 'thread.created' && typeof request.json.data?.thread_id === 'string')
      created.set(request.json.data.thread_id, at);
    return echoChallenge(request);
  };
  return { receiver, created, events: () => events, close: () => receiver.stop() };
}

/** PUT /agents/me/card with the receiver's URL, then waits until the relay has verified it (the challenge echoed). */
export async function setVerifiedWebhook(relayUrl: string, apiKey: string, url: string): Promise<void> {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const put = await fetch(`${relayUrl}/agents/me/card`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ notification_url: url }),
  });
  if (!put.ok) throw new Error(`PUT /agents/me/card: ${put.status} ${await put.text()}`);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const me = (await (await fetch(`${relayUrl}/agents/me`, { headers })).json()) as any;
    if (me.notification?.verified === true) return;
    if (Date.now() > deadline)
      throw new Error(`the webhook was not verified within 30 s: ${JSON.stringify(me.notification)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Ours: message/send over HTTP to a relay running api+worker → the DM's chat.postMessage at the fake Slack, and
 * the recipient's webhook receiving thread.created; both timed from the same send.
 */
async function relayDelivery(
  opts: DeliveryBenchOptions,
  name: string,
  count: number,
): Promise<{ dm: Figures; webhook: Figures }> {
  const slack = await startFakeSlack();
  const hooks = await startTimedReceiver();
  const recipientSlack = 'U0BENCHDM1';
  slack.addUser(recipientSlack);
  // The relay as its own process, started as `npm start` starts it (every role), on the bench's servers.
  const relay = await startRelayProcess({
    mongodbUrl: opts.mongodbUrl,
    database: name,
    redisUrl: opts.redisUrl,
    prefix: name,
    keyPepper: opts.keyPepper,
    env: {
      SLACK_BOT_TOKEN: slack.token,
      SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
      SLACK_API_URL: slack.url,
      RELAY_DIGEST_AT: 'off', // a digest tick would add DMs the bench does not count
      RELAY_WEBHOOK_ALLOW_PRIVATE: '1',
    },
  });
  const adminKey = relay.adminKey;
  try {
    const post = async (path: string, key: string, body: unknown) => {
      const response = await fetch(`${relay.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await response.json()) as any;
    };
    const sender = (
      await post('/admin/agents', adminKey, { handle: 'bench-dm-sender@acme', name: 'S', role: 'engineer' })
    ).api_key as string;
    const recipient = (
      await post('/admin/agents', adminKey, {
        handle: 'bench-dm-recipient@acme',
        name: 'R',
        role: 'engineer',
        slack_user_id: recipientSlack,
      })
    ).api_key as string;
    await setVerifiedWebhook(relay.url, recipient, hooks.receiver.url());

    const arrivals = new Map<number, number>();
    let scanned = 0;
    const collect = () => {
      const calls = slack.calls;
      for (; scanned < calls.length; scanned += 1) {
        const call = calls[scanned]!;
        if (call.method !== 'chat.postMessage' || call.response.ok !== true) continue;
        const match = /bench-dm (\d+)\./.exec(String(call.args.text));
        if (match) arrivals.set(Number(match[1]), call.at);
      }
      return arrivals.size;
    };
    const sentAt = new Map<number, number>();
    const threadOf = new Map<number, string>();
    const hooked = () => {
      let n = 0;
      for (const thread of threadOf.values()) if (hooks.created.has(thread)) n += 1;
      return n;
    };
    const run = async (from: number, n: number) => {
      await openLoop(opts.rate, n, async (i) => {
        const id = from + i;
        sentAt.set(id, Date.now());
        const answer = await post('/a2a', sender, {
          jsonrpc: '2.0',
          id,
          method: 'message/send',
          params: {
            recipient: 'bench-dm-recipient@acme',
            intent: 'inform',
            message: {
              parts: [{ type: 'text', text: `bench-dm ${id}. The API now pages users; please update the web client.` }],
            },
          },
        });
        if (!answer.result?.task_id) throw new Error(`message/send failed: ${JSON.stringify(answer)}`);
        threadOf.set(id, answer.result.task_id as string);
      });
      await waitFor(
        'relay deliveries',
        () => collect() >= from + n && hooked() >= from + n,
        Math.max(120_000, (8_000 * n) / opts.rate),
        () => `(${arrivals.size} of ${from + n} DMs and ${hooked()} webhook calls arrived)`,
      );
    };
    await run(0, WARMUP);
    const meter = await cpuMeter([relay.pid, ...(opts.ferretPid ? [opts.ferretPid] : [])]);
    const t0 = Date.now();
    await run(WARMUP, count);
    const elapsed = Date.now() - t0;
    const cpuMs = await meter.read();
    const ids = Array.from({ length: count }, (_, i) => WARMUP + i);
    return {
      dm: figures(
        ids.map((id) => arrivals.get(id)! - sentAt.get(id)!),
        elapsed,
        cpuMs,
      ),
      webhook: figures(
        ids.map((id) => hooks.created.get(threadOf.get(id)!)! - sentAt.get(id)!),
        elapsed,
        cpuMs,
      ),
    };
  } finally {
    await relay.stop().catch(() => {});
    await slack.close();
    await hooks.close();
  }
}

export async function benchDelivery(opts: DeliveryBenchOptions): Promise<void> {
  const prefix = `${opts.runId.slice(0, 30)}_dl`;
  opts.progress(
    `delivery: baseline (BullMQ add → worker → HTTP POST) at ${opts.rate}/s, ${WARMUP} warm-up + ${opts.count}…`,
  );
  const base = await bareDeliveryBaseline(opts, prefix, opts.count);
  opts.progress(
    `delivery: handoff (message/send) → DM at the fake Slack and webhook call at ${opts.rate}/s, ${WARMUP} warm-up + ${opts.count}…`,
  );
  const ours = await relayDelivery(opts, prefix, opts.count);
  const target = { label: 'p99 ≤3×', met: (o: Figures, b: Figures) => o.p99 <= 3 * b.p99 };
  const rows: Row[] = [
    {
      name: `handoff → Slack DM @${opts.rate}/s`,
      concurrency: WORKER_CONCURRENCY,
      ours: ours.dm,
      baseline: base,
      target,
    },
    {
      name: `handoff → webhook @${opts.rate}/s`,
      concurrency: WORKER_CONCURRENCY,
      ours: ours.webhook,
      baseline: base,
      target,
    },
  ];
  printTable(
    "Delivery (latency from send to arrival; each handoff is both DM'd and webhooked, one run; req/s = handoffs per second; cpu ms/req = per handoff, both deliveries; conc = worker concurrency)",
    'BullMQ add → worker → one HTTP POST, same rate',
    rows,
    opts.out,
  );
  // Sent open-loop at `rate`: a relay that keeps up delivers at about that rate; less means a growing backlog,
  // and the latencies then measure the queue, not the path.
  for (const row of rows) {
    if (row.ours.reqPerSec < 0.9 * opts.rate) {
      opts.out(
        `fell behind: ${row.name} delivered ${row.ours.reqPerSec.toFixed(1)}/s of ${opts.rate}/s sent (latencies include the backlog; lower BENCH_DELIVERY_RATE)`,
      );
    }
  }
}
