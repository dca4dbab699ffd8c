// Bench phase `create`: `message/send` creates against the relay as its own process (`cli.js start`, every role,
// Slack off, as a new user runs it) beside the raw baseline (one insertOne of the same thread document into the
// same collection + one BullMQ add, from this process) on the same servers, alternated per concurrency, at the
// sizes the paths phase grows the database to. The relay's and FerretDB's CPU is read during each run and in the
// 10 s after it. Target (PERFORMANCE.md): throughput ≥ 0.7× and p99 ≤ 3× the baseline's, and idle after.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { ThreadDoc } from '../relay-core/domain/documents';
import { DELIVERY_JOB_OPTIONS, redisConnection } from '../relay-core/queues/bullmq-queues';
import { BenchHttpClient } from './bench-http';
import { measure, summarize, type Figures } from './bench-measure';
import { cpuSplit, handoffParams, register, startServedRelay, type ServedPhase } from './bench-paths';
import { commandMeter, cpuMeter } from './bench-process';

export type CreateOptions = ServedPhase;

interface Measured extends Figures {
  serverCpuMsPerRequest: number;
  /** The same, each process's: the relay's, then FerretDB's (FerretDB's alone for the baseline). */
  cpuMsPerRequestEach: number[];
  /** FerretDB commands per request over the run and the 10 s after it (null on MONGODB_URL). */
  commandsPerRequest: number | null;
  /** The same by command (and finds by collection), most first. */
  commandMix: Array<[string, number]>;
  /** CPU of the servers in the 10 s after the run, and in its first second. */
  after10sMs: number;
  after1sMs: number;
}

async function run(
  pids: number[],
  metricsUrl: string | null,
  concurrency: number,
  warmup: number,
  count: number,
  fn: () => Promise<void>,
): Promise<Measured> {
  await measure(concurrency, warmup, fn);
  const meter = await cpuMeter(pids);
  const commands = metricsUrl ? await commandMeter(metricsUrl) : null;
  const sample = await measure(concurrency, count, fn);
  const duringEach = await meter.readEach();
  const during = duringEach.reduce((a, b) => a + b, 0);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const after1s = (await meter.read()) - during;
  await new Promise((resolve) => setTimeout(resolve, 9_000));
  const after10s = (await meter.read()) - during;
  const counted = commands ? await commands.read() : null;
  const commandsPerRequest = counted ? counted.total / count : null;
  const commandMix = (counted?.byKind ?? []).map(([kind, n]): [string, number] => [kind, n / count]);
  return {
    ...summarize(sample),
    serverCpuMsPerRequest: during / count,
    cpuMsPerRequestEach: duringEach.map((ms) => ms / count),
    commandsPerRequest,
    commandMix,
    after10sMs: after10s,
    after1sMs: after1s,
  };
}

/** Creates and baseline at one size; returns the printed rows' figures for the summary. */
export async function benchCreateAt(
  opts: CreateOptions,
  size: number,
): Promise<Array<{ concurrency: number; ours: Measured; base: Measured }>> {
  const relay = await startServedRelay(opts);
  const client = new BenchHttpClient(relay.url);
  const connection = redisConnection(opts.redisUrl, 'producer');
  connection.on('error', () => {});
  const queue = new Queue('bench-baseline', { connection, prefix: opts.runId });
  const results: Array<{ concurrency: number; ours: Measured; base: Measured }> = [];
  try {
    const sender = await register(client, relay.adminKey, `bench-create-${size}@acme`);
    const recipient = await register(client, relay.adminKey, `bench-create-to-${size}@acme`);
    const { task_id } = await client.call(
      sender.apiKey,
      'message/send',
      handoffParams(recipient.handle, `${opts.runId}-c${size}-template`),
    );
    // Without what the template's own life left on it (its jobs in flight, its armed timer step): a baseline thread
    // that claimed a pending job would have the relay's outbox sweep clean up after the bench during the measurement.
    const {
      jobs_pending: _jobs,
      pending_since: _since,
      next_timer: _step,
      next_due_at: _due,
      timer_version: _armed,
      ...template
    } = (await opts.store.threads.findOne({ _id: task_id }))!;
    // The baseline writes into the relay's own threads collection, at its size.
    const baseline = async () => {
      const id = randomUUID();
      const event = { ...template.outbox[0]!, id: randomUUID(), at: new Date() };
      await opts.store.threads.insertOne({
        ...template,
        _id: id,
        from: 'bench-baseline@acme',
        to: 'bench-baseline@acme',
        outbox: [event],
      } as ThreadDoc);
      await queue.add(
        event.type,
        { thread_id: id, event_id: event.id, type: event.type },
        { ...DELIVERY_JOB_OPTIONS, jobId: event.id },
      );
    };
    let sequence = 0;
    const ours = async () => {
      const result = await client.call(
        sender.apiKey,
        'message/send',
        handoffParams(recipient.handle, `${opts.runId}-c${size}-${sequence++}`),
      );
      if (typeof result?.task_id !== 'string')
        throw new Error(`message/send answered without a task_id: ${JSON.stringify(result)}`);
    };
    const ferret = opts.ferretPid ? [opts.ferretPid] : [];
    for (const c of opts.concurrencies) {
      opts.progress(
        `create at ${size.toLocaleString('en')} threads, c=${c}: ${opts.warmup} + ${opts.requests} baseline inserts+adds, then as many message/send…`,
      );
      const base = await run(ferret, opts.ferretMetricsUrl, c, opts.warmup, opts.requests, baseline);
      const mine = await run([relay.pid, ...ferret], opts.ferretMetricsUrl, c, opts.warmup, opts.requests, ours);
      results.push({ concurrency: c, ours: mine, base });
    }
  } finally {
    await queue.close();
    connection.disconnect();
    client.close();
    await relay.stop();
  }
  printCreate(opts, size, results);
  return results;
}

function printCreate(
  opts: CreateOptions,
  size: number,
  results: Array<{ concurrency: number; ours: Measured; base: Measured }>,
): void {
  opts.out('');
  opts.out(
    `Create at ${size.toLocaleString('en')} threads (relay process vs insertOne + BullMQ add from the bench; cpu = relay+FerretDB ms per request, baseline: FerretDB only; after = server CPU ms in the 1 s / 10 s after the run)`,
  );
  opts.out(
    '  c   req/s  p50 ms  p99 ms  cpu/req  after 1s/10s | base req/s  p50   p99  cpu/req  after 1s/10s | tput ratio  p99 ratio  target',
  );
  for (const { concurrency, ours, base } of results) {
    const tput = ours.reqPerSec / base.reqPerSec;
    const p99 = ours.p99 / base.p99;
    const met = tput >= 0.7 && p99 <= 3;
    opts.out(
      `${String(concurrency).padStart(3)}  ${ours.reqPerSec.toFixed(1).padStart(6)}  ${ours.p50.toFixed(1).padStart(6)}  ${ours.p99.toFixed(1).padStart(6)}  ${ours.serverCpuMsPerRequest.toFixed(1).padStart(7)}  ${`${ours.after1sMs.toFixed(0)}/${ours.after10sMs.toFixed(0)}`.padStart(12)} | ` +
        `${base.reqPerSec.toFixed(1).padStart(10)}  ${base.p50.toFixed(1).padStart(4)}  ${base.p99.toFixed(1).padStart(4)}  ${base.serverCpuMsPerRequest.toFixed(1).padStart(7)}  ${`${base.after1sMs.toFixed(0)}/${base.after10sMs.toFixed(0)}`.padStart(12)} | ` +
        `${tput.toFixed(2).padStart(9)}×  ${p99.toFixed(2).padStart(8)}×  ${met ? 'PASS' : 'MISS'} (≥0.7× & ≤3×)`,
    );
  }
  // Where a create's CPU goes: the relay's own process against FerretDB's, and how many commands it sends there
  // (counted over the run and the 10 s after, so the jobs it leaves behind are in).
  const commands = (figures: Measured) =>
    figures.commandsPerRequest === null
      ? ''
      : `, ${figures.commandsPerRequest.toFixed(1)} FerretDB commands (${figures.commandMix.map(([kind, n]) => `${kind} ${n.toFixed(1)}`).join(', ')})`;
  for (const { concurrency, ours, base } of results) {
    opts.out(
      `  c=${concurrency} per create: ${ours.serverCpuMsPerRequest.toFixed(1)} ms CPU${cpuSplit(ours)}${commands(ours)}` +
        ` | baseline: FerretDB ${base.serverCpuMsPerRequest.toFixed(1)} ms${commands(base)}`,
    );
  }
}
