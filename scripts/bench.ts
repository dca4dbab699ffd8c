// `npm run bench`: measures the relay in this process against baselines taken in the same run, on the
// same FerretDB and Redis, and prints the figures beside them. Misses are reported, never failed.
//
// What it measures (targets from PERFORMANCE.md):
// - create: `message/send` over HTTP at concurrency 1, 8, 32 vs one insertOne of the same thread
//   document into a scratch collection + one BullMQ add, without HTTP. Target: throughput ≥ 0.7× and
//   p99 ≤ 3× the baseline's.
// - lists: `tasks/list` first page and `agents/list` by skill at c=8 with 1k threads / 100 teammates,
//   then again after topping up to 100k threads / 10k teammates. Target: 100k costs ≤ 1.5× what 1k costs.
// - mcp: the real stdio MCP server (dist/mcp/stdio.js) via the SDK Client: ready time (spawn → connect())
//   and 20 warm-up + 300 sequential handoff_to_teammate calls vs the same create as a direct message/send
//   POST, sequential. Targets: p50 ≤ 5 ms, ready ≤ 300 ms (see bench-mcp.ts).
// - the RSS of this process (the relay and the bench client together) after each phase.
//
// - delivery (scripts/bench-delivery.ts): handoffs at BENCH_DELIVERY_RATE/s (default 2) → DM at a fake Slack and
//   → the recipient's webhook on a loopback receiver (two rows, one run), vs queue.add → BullMQ worker → one loopback HTTP POST at the same rate. Target: p99 ≤ 2×.
// - soak (scripts/bench-soak.ts, only with BENCH_ONLY=soak or `npm run bench:soak`): the built relay as its own
//   process under steady load for BENCH_SOAK_SECONDS (default 600), RSS every BENCH_SOAK_SAMPLE_SECONDS (30).
//
// Environment: BENCH_SCALE (default 1) scales the large stage: 0.1 → 10k threads / 1k teammates for
// a quick run. BENCH_ONLY=create, BENCH_ONLY=mcp or BENCH_ONLY=lists runs one phase (e.g. under `node --cpu-prof`).
// MONGODB_URL uses that server instead of a FerretDB of our own (temp data dir). REDIS_URL defaults
// to redis://127.0.0.1:6379 (redis-server is started on loopback if nothing answers). Every run uses
// a fresh database and queue prefix and removes them at the end.
//
// Run time on the 2-core reference box: ~4 min at BENCH_SCALE=0.1, ~12 min at the default scale.
// Seeding 100k threads into FerretDB takes 40–50 s (2,000–2,700 docs/s); the time goes to the list
// calls at the large stage: FerretDB 1.24's SQLite handler pushes no filter, sort or limit on these
// fields down to SQLite, so every call reads and decodes the whole collection (a tasks/list call at
// 100k threads and c=8 takes about 4 min). So list measurements stop starting calls after
// LIST_TIME_CAP_MS and say how many ran.
//
// The relay runs the `api` role with placeholder Slack settings: without Slack settings it would
// skip the BullMQ add, and the baseline includes one. Nothing consumes the queue (no worker role, so
// also no outbox sweep) and nothing ever calls Slack. The per-teammate rate limit is raised so that
// thousands of creates from one sender are measured rather than refused; its check still runs.
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DELIVERY_JOB_OPTIONS, redisConnection } from '../relay-core/queues/bullmq-queues';
import { loadConfig } from '../relay-core/ops/config';
import type { AgentDoc, ThreadDoc } from '../relay-core/domain/documents';
import { createLogger } from '../relay-core/ops/logger';
import { BenchHttpClient } from './bench-http';
import { benchDelivery } from './bench-delivery';
import { benchMcp } from './bench-mcp';
import { benchSoak } from './bench-soak';
import { measure, mib, printTable, summarize, type Figures, type Row, type Target } from './bench-measure';
import { MAILBOX_EVERY, TARGET_SKILL, TARGET_SKILL_HOLDERS, openInMailbox, seed, seededAgent, seededThread } from './bench-seed';
import { ensureFerretDbBinary } from './local-services/ferretdb-build';
import { startFerretDb } from './local-services/ferretdb';
import { findFreePort } from './local-services/ports';
import { ensureRedis } from './local-services/redis';
import { startRelay, type RunningRelay } from './relay';

const WARMUP = 50;
const CREATE_RUNS = [
  { concurrency: 1, requests: 400 },
  { concurrency: 8, requests: 1_000 },
  { concurrency: 32, requests: 1_000 },
];
const LIST_CONCURRENCY = 8;
const LIST_REQUESTS = 300;
/** A list call that has become very slow is measured for this long rather than LIST_REQUESTS times. */
const LIST_TIME_CAP_MS = 60_000;
const LIST_WARMUP_CAP_MS = 10_000;
const SMALL: Size = { threads: 1_000, teammates: 100 };
const LARGE: Size = { threads: 100_000, teammates: 10_000 };

const CREATE_TARGET: Target = {
  label: 'tput ≥0.7× & p99 ≤3×',
  met: (ours, base) => ours.reqPerSec >= 0.7 * base.reqPerSec && ours.p99 <= 3 * base.p99,
};
// At a fixed concurrency the cost of a request is 1/throughput; the median guards against a few slow calls.
const LIST_TARGET: Target = {
  label: 'cost (1/tput) ≤1.5× & p50 ≤1.5×',
  met: (ours, base) => base.reqPerSec / ours.reqPerSec <= 1.5 && ours.p50 <= 1.5 * base.p50,
};

const benchStart = performance.now();
const progress = (line: string) => process.stderr.write(`[${((performance.now() - benchStart) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
const out = (line: string) => process.stdout.write(`${line}\n`);

const PHASES = ['create', 'mcp', 'lists', 'delivery', 'soak'] as const;
type Phase = (typeof PHASES)[number];
/** Run when BENCH_ONLY is unset; the soak takes ten minutes and runs only when asked for. */
const DEFAULT_PHASES: Phase[] = ['create', 'mcp', 'delivery', 'lists'];

interface Settings {
  scale: number;
  phases: Set<Phase>;
  mongodbUrl?: string;
  redisUrl: string;
  deliveryRate: number;
  deliveryCount: number;
  soakSeconds: number;
  soakSampleSeconds: number;
  soakRate: number;
}

function readSettings(env: NodeJS.ProcessEnv): Settings {
  const scale = env.BENCH_SCALE === undefined || env.BENCH_SCALE === '' ? 1 : Number(env.BENCH_SCALE);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 10) throw new Error(`BENCH_SCALE: must be a number in (0, 10] (got "${env.BENCH_SCALE}")`);
  const only = env.BENCH_ONLY || undefined;
  if (only !== undefined && !(PHASES as readonly string[]).includes(only)) throw new Error(`BENCH_ONLY: must be one of ${PHASES.join(', ')} (got "${only}")`);
  const positive = (name: string, fallback: number) => {
    const raw = env[name];
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}: must be a positive number (got "${raw}")`);
    return value;
  };
  return {
    scale,
    phases: new Set(only ? [only as Phase] : DEFAULT_PHASES),
    deliveryRate: positive('BENCH_DELIVERY_RATE', 2),
    deliveryCount: Math.round(positive('BENCH_DELIVERY_COUNT', 150)),
    soakSeconds: positive('BENCH_SOAK_SECONDS', 600),
    soakSampleSeconds: positive('BENCH_SOAK_SAMPLE_SECONDS', 30),
    soakRate: positive('BENCH_SOAK_RATE', 1),
    mongodbUrl: env.MONGODB_URL || undefined,
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
  };
}

/** Undo steps, run last-in first-out; one failing does not skip the others. Runs once, however often asked. */
class Cleanup {
  private readonly steps: Array<{ name: string; run: () => Promise<unknown> }> = [];
  private running: Promise<void> | undefined;

  add(name: string, run: () => Promise<unknown>): void {
    this.steps.push({ name, run });
  }

  runAll(): Promise<void> {
    this.running ??= (async () => {
      progress('cleaning up…');
      while (this.steps.length > 0) {
        const step = this.steps.pop()!;
        try {
          await step.run();
        } catch (error) {
          progress(`cleanup: ${step.name} failed: ${(error as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

interface Bench {
  relay: RunningRelay;
  adminKey: string;
  client: BenchHttpClient;
  redisUrl: string;
  mongodbUrl: string;
  /** The database name and the BullMQ prefix of this run. */
  runId: string;
}

interface Teammate {
  handle: string;
  apiKey: string;
}

// ── set-up ──────────────────────────────────────────────────────────────────────────────────

async function startBench(settings: Settings, cleanup: Cleanup): Promise<Bench> {
  const runId = `bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  let mongodbUrl = settings.mongodbUrl;
  if (!mongodbUrl) {
    const tempDir = await fs.mkdtemp(path.join(os.tmpdir(), 'handoff-bench-'));
    cleanup.add(`remove ${tempDir}`, () => fs.rm(tempDir, { recursive: true, force: true }));
    progress(`FerretDB binary: ${await ensureFerretDbBinary(progress)}; starting it on SQLite under ${tempDir}…`);
    const ferret = await startFerretDb({ dataDir: path.join(tempDir, 'ferretdb'), log: progress });
    cleanup.add('stop FerretDB', () => ferret.stop());
    mongodbUrl = ferret.url;
  }
  const redis = await ensureRedis(settings.redisUrl, progress);
  if (redis.started) cleanup.add('stop redis-server', () => redis.stop());
  cleanup.add(`delete the BullMQ keys ${runId}:*`, () => deleteRedisKeys(settings.redisUrl, runId));
  // The delivery and soak phases' own relays and baseline queues (bench-delivery.ts, bench-soak.ts).
  for (const suffix of ['_dl', '_sk']) cleanup.add(`delete the BullMQ keys ${runId}${suffix}:*`, () => deleteRedisKeys(settings.redisUrl, `${runId}${suffix}`));

  const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
  const config = loadConfig({
    PORT: String(await findFreePort()),
    MONGODB_URL: mongodbUrl,
    MONGODB_DB: runId,
    REDIS_URL: settings.redisUrl,
    RELAY_QUEUE_PREFIX: runId,
    RELAY_ADMIN_KEY: adminKey,
    RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    // The limiter still runs (its Redis call is part of every create); only its ceiling is lifted.
    RELAY_RATE_LIMIT_PER_MINUTE: '1000000',
    RELAY_ROLES: 'api',
    SLACK_BOT_TOKEN: 'xoxb-bench-placeholder-never-called',
    SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
    SLACK_API_URL: 'http://127.0.0.1:9/',
  });
  progress(`starting the relay (database and queue prefix ${runId})…`);
  const relay = await startRelay({
    config: { ...config, mongodbUrl, adminKey, keyPepper: config.keyPepper! },
    log: createLogger(config.logLevel, 2),
  });
  cleanup.add('stop the relay', () => relay.stop());
  if (settings.mongodbUrl) cleanup.add(`drop database ${runId}`, () => relay.store.db.dropDatabase());

  const client = new BenchHttpClient(relay.url);
  cleanup.add('close the HTTP client', async () => client.close());
  return { relay, adminKey, client, redisUrl: settings.redisUrl, mongodbUrl, runId };
}

async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function register(bench: Bench, handle: string, skills: string[] = []): Promise<Teammate> {
  const { status, body } = await bench.client.post('/admin/agents', bench.adminKey, {
    handle,
    name: handle.split('@')[0],
    role: 'engineer',
    skills,
  });
  if (status !== 201 || typeof body.api_key !== 'string') throw new Error(`POST /admin/agents ${handle}: HTTP ${status} ${JSON.stringify(body)}`);
  return { handle, apiKey: body.api_key };
}

function reportRss(phase: string): void {
  out(`rss after ${phase}: ${mib(process.memoryUsage().rss)} (relay and bench client share this process)`);
}

// ── create ──────────────────────────────────────────────────────────────────────────────────

/** A realistic handoff: a few hundred characters of summary, a diff, a file reference and a test command. */
function handoffParams(recipient: string, idempotencyKey: string) {
  const diff = Array.from({ length: 30 }, (_, n) => `-  const old${n} = legacyUsers.page(${n});\n+  const page${n} = await users.list({ cursor, limit: ${n} });`).join('\n');
  return {
    task_id: null,
    recipient,
    intent: 'inform',
    message: {
      role: 'user',
      parts: [
        {
          type: 'text',
          text:
            'I refactored GET /users: it now returns { items, next_cursor } instead of a bare array, and the ' +
            'page size is capped at 100. The web client pages through users in two places; both need the new ' +
            'shape. Tests for the API side are green; the web tests below still expect the old array.',
        },
      ],
    },
    artifacts: [
      { type: 'file_diff', path: 'src/api/users.ts', diff },
      { type: 'file_ref', path: 'apps/web/src/users/list.tsx', lines: '10-42' },
      { type: 'test_command', command: 'npm test -- users', cwd: 'apps/web' },
    ],
    metadata: { client_idempotency_key: idempotencyKey },
  };
}

/** The baseline of one create: the same thread document into a scratch collection and one BullMQ add, no HTTP. */
async function createBaseline(bench: Bench, template: ThreadDoc) {
  const scratch = bench.relay.store.db.collection<ThreadDoc>('bench_scratch');
  const connection = redisConnection(bench.redisUrl, 'producer');
  connection.on('error', () => {});
  const queue = new Queue('bench-baseline', { connection, prefix: bench.runId });
  return {
    async run(): Promise<void> {
      const id = randomUUID();
      const event = { ...template.outbox[0]!, id: randomUUID(), at: new Date() };
      await scratch.insertOne({ ...template, _id: id, outbox: [event] });
      await queue.add(event.type, { thread_id: id, event_id: event.id, type: event.type }, { ...DELIVERY_JOB_OPTIONS, jobId: event.id });
    },
    async close(): Promise<void> {
      await queue.close();
      connection.disconnect();
    },
  };
}

/**
 * The relay's HTTP floor: the same body sent to a method that does not exist, so the call pays the HTTP
 * round trip, body parsing and authentication but never touches the store or the queue.
 */
async function httpFloor(bench: Bench, sender: Teammate, recipient: Teammate): Promise<void> {
  const { error } = await bench.client.rpc(sender.apiKey, 'bench/http-floor', handoffParams(recipient.handle, 'floor'));
  if (error?.code !== -32601) throw new Error(`bench/http-floor: expected method_not_found, got ${JSON.stringify(error)}`);
}

async function benchCreate(bench: Bench, sender: Teammate, recipient: Teammate, template: ThreadDoc): Promise<{ rows: Row[]; floors: string[] }> {
  const baseline = await createBaseline(bench, template);
  let sequence = 0;
  const ours = async () => {
    const result = await bench.client.call(sender.apiKey, 'message/send', handoffParams(recipient.handle, `${bench.runId}-${sequence++}`));
    if (typeof result?.task_id !== 'string') throw new Error(`message/send answered without a task_id: ${JSON.stringify(result)}`);
  };
  const floor = () => httpFloor(bench, sender, recipient);
  const rows: Row[] = [];
  const floors: string[] = [];
  try {
    for (const { concurrency, requests } of CREATE_RUNS) {
      progress(`create at c=${concurrency}: warm-up ${WARMUP} + ${requests} baseline inserts+adds, ${requests} message/send, ${requests} HTTP-floor calls…`);
      await measure(concurrency, WARMUP, () => baseline.run());
      await measure(concurrency, WARMUP, ours);
      const base = summarize(await measure(concurrency, requests, () => baseline.run()));
      const mine = summarize(await measure(concurrency, requests, ours));
      const f = summarize(await measure(concurrency, requests, floor));
      rows.push({ name: 'create message/send', concurrency, ours: mine, baseline: base, target: CREATE_TARGET });
      floors.push(`c=${concurrency}: ${f.reqPerSec.toFixed(0)} req/s, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms, cpu ${f.cpuMsPerRequest.toFixed(2)} ms/req`);
    }
  } finally {
    await baseline.close();
  }
  return { rows, floors };
}

// ── lists ───────────────────────────────────────────────────────────────────────────────────

const TASKS_LIST_PARAMS = { filter: { role: 'recipient', status: ['pending', 'accepted'] }, page: { limit: 20 } };
const AGENTS_LIST_PARAMS = { skill: TARGET_SKILL };

interface ListMethod {
  name: string;
  method: string;
  params: unknown;
  /** How many items a correct answer holds at both scales, to catch a relay that is fast because it is wrong. */
  expected: number;
  count(result: any): number;
}

const LIST_METHODS: ListMethod[] = [
  { name: 'tasks/list first page', method: 'tasks/list', params: TASKS_LIST_PARAMS, expected: 20, count: (r) => r?.items?.length ?? -1 },
  {
    name: `agents/list skill=${TARGET_SKILL}`,
    method: 'agents/list',
    params: AGENTS_LIST_PARAMS,
    expected: TARGET_SKILL_HOLDERS,
    count: (r) => r?.teammates?.length ?? -1,
  },
];

/** The list methods this build answers; method_not_found is reported and skipped, any other error breaks the bench. */
async function availableListMethods(bench: Bench, reader: Teammate): Promise<ListMethod[]> {
  const available: ListMethod[] = [];
  for (const m of LIST_METHODS) {
    const { error } = await bench.client.rpc(reader.apiKey, m.method, m.params);
    if (error?.code === -32601) {
      out(`${m.method}: not available in this build`);
      continue;
    }
    if (error) throw new Error(`${m.method} answered ${error.data?.code ?? error.code}: ${error.message}`);
    available.push(m);
  }
  return available;
}

async function measureLists(bench: Bench, reader: Teammate, methods: ListMethod[]): Promise<Map<string, Figures>> {
  const figures = new Map<string, Figures>();
  for (const m of methods) {
    progress(`${m.method} at c=${LIST_CONCURRENCY}: warm-up ${WARMUP} (at most ${LIST_WARMUP_CAP_MS / 1000} s) + ${LIST_REQUESTS} (at most ${LIST_TIME_CAP_MS / 1000} s)…`);
    const got = m.count(await bench.client.call(reader.apiKey, m.method, m.params));
    if (got !== m.expected) out(`warning: ${m.method} returned ${got} items, expected ${m.expected}`);
    const call = async () => void (await bench.client.call(reader.apiKey, m.method, m.params));
    await measure(LIST_CONCURRENCY, WARMUP, call, LIST_WARMUP_CAP_MS);
    const sample = await measure(LIST_CONCURRENCY, LIST_REQUESTS, call, LIST_TIME_CAP_MS);
    if (sample.latenciesMs.length < LIST_REQUESTS) {
      out(`${m.method}: only ${sample.latenciesMs.length} requests started within ${LIST_TIME_CAP_MS / 1000} s (took ${(sample.elapsedMs / 1000).toFixed(0)} s to finish)`);
    }
    figures.set(m.method, summarize(sample));
  }
  return figures;
}

interface Size {
  threads: number;
  teammates: number;
}

/** Seeds teammates and threads from `from` up to `size`, copying the templates. */
async function growTo(bench: Bench, from: Size, size: Size, templates: { thread: ThreadDoc; agent: AgentDoc }, reader: string): Promise<void> {
  const { store } = bench.relay;
  const epoch = Date.now() - 200 * 24 * 3600 * 1000;
  progress(`seeding teammates ${from.teammates.toLocaleString('en')} → ${size.teammates.toLocaleString('en')} and threads ${from.threads.toLocaleString('en')} → ${size.threads.toLocaleString('en')}…`);
  const agentSeconds = await seed(store.agents, from.teammates, size.teammates, (i) => seededAgent(templates.agent, i, epoch), progress);
  const threadSeconds = await seed(store.threads, from.threads, size.threads, (i) => seededThread(templates.thread, i, { reader, teammates: size.teammates, epoch }), progress);
  const rate = (n: number, s: number) => `${n.toLocaleString('en')} in ${s.toFixed(1)} s (${Math.round(n / s)}/s)`;
  out(`seeded teammates: ${rate(size.teammates - from.teammates, agentSeconds)}; threads: ${rate(size.threads - from.threads, threadSeconds)} (insertMany in batches)`);
}

async function benchLists(bench: Bench, settings: Settings, reader: Teammate, template: ThreadDoc): Promise<void> {
  const { store } = bench.relay;
  const large: Size = { threads: Math.round(LARGE.threads * settings.scale), teammates: Math.round(LARGE.teammates * settings.scale) };
  const agentTemplate = await store.agents.findOne({ _id: reader.handle });
  if (!agentTemplate) throw new Error(`the relay did not store teammate ${reader.handle}`);
  // The create phase's threads would crowd the small stage: the list stages hold seeded threads only.
  await store.threads.deleteMany({});

  await growTo(bench, { threads: 0, teammates: 0 }, SMALL, { thread: template, agent: agentTemplate }, reader.handle);
  reportRss(`seeding ${SMALL.threads} threads`);
  out(`reader mailbox: ${SMALL.threads / MAILBOX_EVERY} threads, ${openInMailbox(SMALL.threads)} open; skill ${TARGET_SKILL} held by ${TARGET_SKILL_HOLDERS} teammates`);
  const methods = await availableListMethods(bench, reader);
  const small = await measureLists(bench, reader, methods);
  reportRss('lists at small scale');

  await growTo(bench, SMALL, large, { thread: template, agent: agentTemplate }, reader.handle);
  reportRss(`seeding ${large.threads} threads`);
  out(`reader mailbox: ${large.threads / MAILBOX_EVERY} threads, ${openInMailbox(large.threads)} open; skill ${TARGET_SKILL} held by ${TARGET_SKILL_HOLDERS} teammates`);
  const big = await measureLists(bench, reader, methods);
  reportRss('lists at large scale');

  const rows: Row[] = methods.map((m) => ({
    name: m.name,
    concurrency: LIST_CONCURRENCY,
    ours: big.get(m.method)!,
    baseline: small.get(m.method)!,
    target: LIST_TARGET,
  }));
  const label = (s: Size) => `${s.threads.toLocaleString('en')} threads / ${s.teammates.toLocaleString('en')} teammates`;
  if (rows.length > 0) printTable(`Lists at ${label(large)}`, `the same call at ${label(SMALL)}`, rows, out);
}

// ── main ────────────────────────────────────────────────────────────────────────────────────

async function main(): Promise<number> {
  const settings = readSettings(process.env);
  const cleanup = new Cleanup();
  let interrupted = false;
  process.once('SIGINT', () => {
    interrupted = true;
    progress('SIGINT: stopping');
    // Cleaning up makes whatever main awaits fail; main then waits for the same cleanup.
    void cleanup.runAll().then(() => process.exit(130));
  });
  try {
    out(`handoff-relay bench · node ${process.version} · ${os.cpus().length} CPUs · BENCH_SCALE=${settings.scale}`);
    const bench = await startBench(settings, cleanup);
    reportRss('start');
    const sender = await register(bench, 'bench-sender@acme');
    const recipient = await register(bench, 'bench-recipient@acme');
    const reader = await register(bench, 'bench-reader@acme', ['typescript']);

    // The template every seeded and baseline thread copies: a real one, written by the relay.
    const { task_id } = await bench.client.call(sender.apiKey, 'message/send', handoffParams(reader.handle, `${bench.runId}-template`));
    const template = await bench.relay.store.threads.findOne({ _id: task_id });
    if (!template) throw new Error(`thread ${task_id} was created but is not in the threads collection`);
    out(`thread document: ${Buffer.byteLength(JSON.stringify(template))} bytes as JSON`);

    if (settings.phases.has('create')) {
      const { rows, floors } = await benchCreate(bench, sender, recipient, template);
      printTable('Create', 'insertOne + BullMQ add, no HTTP, same servers and concurrency', rows, out);
      out('HTTP floor of the relay (the same body to an unknown method: HTTP, JSON parse, auth; no store, no queue):');
      for (const line of floors) out(`  ${line}`);
      reportRss('create');
    }
    if (settings.phases.has('mcp')) {
      const params = handoffParams(recipient.handle, 'unused');
      let sequence = 0;
      await benchMcp({
        relayUrl: bench.relay.url,
        senderKey: sender.apiKey,
        toolArguments: { to: recipient.handle, intent: params.intent, summary: params.message.parts[0]!.text, artifacts: params.artifacts },
        directCreate: async () => {
          const result = await bench.client.call(sender.apiKey, 'message/send', handoffParams(recipient.handle, `${bench.runId}-mcp-${sequence++}`));
          if (typeof result?.task_id !== 'string') throw new Error(`message/send answered without a task_id: ${JSON.stringify(result)}`);
        },
        progress,
        out,
      });
      reportRss('mcp');
    }
    if (settings.phases.has('delivery')) {
      await benchDelivery({ mongodbUrl: bench.mongodbUrl, redisUrl: bench.redisUrl, runId: bench.runId, rate: settings.deliveryRate, count: settings.deliveryCount, progress, out });
      reportRss('delivery');
    }
    if (settings.phases.has('soak')) {
      await benchSoak({
        mongodbUrl: bench.mongodbUrl,
        redisUrl: bench.redisUrl,
        runId: bench.runId,
        durationSeconds: settings.soakSeconds,
        sampleSeconds: settings.soakSampleSeconds,
        rate: settings.soakRate,
        progress,
        out,
      });
    }
    if (settings.phases.has('lists')) await benchLists(bench, settings, reader, template);
    out(`\ntotal ${((performance.now() - benchStart) / 1000).toFixed(0)} s`);
    return 0;
  } catch (error) {
    if (interrupted) return 130;
    process.stderr.write(`\nbench failed: ${(error as Error).stack ?? error}\n`);
    return 1;
  } finally {
    await cleanup.runAll();
  }
}

void main().then((code) => process.exit(code));
