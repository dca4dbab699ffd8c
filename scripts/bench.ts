// `npm run bench`: the runner. It starts the servers (FerretDB on SQLite in a temp dir, or MONGODB_URL; Redis),
// runs the phases asked for, and cleans up. Every phase measures the relay the way a user runs it, as its own
// process (`dist/scripts/cli.js start`, every role), with the database grown to each size first, and prints its
// figures beside a baseline measured in the same run. Misses are reported, never failed.
//
// Phases (PERFORMANCE.md has the targets):
// - paths (bench-paths.ts): every hot path at each of BENCH_SIZES threads (teammates a tenth): create, tasks/get
//   with 20 messages, tasks/list first page with and without a status filter, accept, append, agents/list by
//   role / skill / repo, at each of BENCH_CONCURRENCY; the Slack delivery job (handoff → DM at a fake Slack).
//   Target: the largest size costs ≤ 1.5× the smallest. `BENCH_ONLY=lists` is the same phase.
// - create (bench-create.ts): message/send vs one insertOne + one BullMQ add at c=1, 8, 32, at the smallest and
//   the largest size, with the relay's and FerretDB's CPU during the run and in the 10 s after it.
// - mcp (bench-mcp.ts): the real stdio MCP server: ready time and sequential handoff_to_teammate calls.
// - delivery (bench-delivery.ts): handoffs at a steady rate → DM at a fake Slack and → webhook, vs bare BullMQ.
// - events (bench-events.ts): event latency, outbox event → GET /events SSE, one relay process and two (pub/sub);
//   BENCH_EVENT_COUNT handoffs per set-up (default 300).
// - policy (bench-policy.ts): one create's policy decision against a 50-rule policy vs the default, in this process.
// - runs (bench-runs.ts): a run's heartbeat and progress batch (the agent runner's calls) vs tasks/get.
// - soak (bench-soak.ts, only with BENCH_ONLY=soak or `npm run bench:soak`): RSS over 10 minutes.
// - engine (bench-engine.ts, only with BENCH_ONLY=engine): the embedded FerretDB alone, an accept's and a tasks/get's
//   commands, for each of BENCH_FERRETDB_BINARIES (default: the relay's build) in BENCH_ENGINE_ROUNDS (3) alternated rounds.
//
// Environment: BENCH_SIZES (default 1000,10000,100000; 0 is a fresh database) scaled by BENCH_SCALE (default 1; 0.1 → 100, 1k, 10k);
// BENCH_REQUESTS per measurement (default 2000) after BENCH_WARMUP (200); BENCH_CONCURRENCY for the paths (default
// 1,8), BENCH_CREATE_CONCURRENCY for create (default 1,8,32: the targets are at all three; one alone to profile it); BENCH_ONLY=create,paths (any of create, paths, lists, mcp, delivery, events, policy, runs, soak, engine) runs those phases;
// BENCH_RELAY_NODE_OPTIONS (e.g. --cpu-prof) goes to the relay processes. MONGODB_URL uses that server; REDIS_URL
// defaults to redis://127.0.0.1:6379 (started on loopback if nothing answers). Every run uses a fresh database
// and queue prefix and removes them at the end.
//
// Run time on the 2-core reference box: see docs/benchmarks.md; seeding 100k threads (and indexing them)
// takes about two minutes, and the paths at three sizes at the default counts are most of the run.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { MongoStore } from '../relay-core/store/mongo-store';
import { benchCreateAt } from './bench-create';
import { benchDelivery } from './bench-delivery';
import { benchEngine } from './bench-engine';
import { benchEvents } from './bench-events';
import { BenchHttpClient } from './bench-http';
import { benchMcp } from './bench-mcp';
import { benchPolicy } from './bench-policy';
import { benchRuns } from './bench-runs';
import { benchPaths, handoffParams, register, startServedRelay } from './bench-paths';
import { stopRelaysNow } from './bench-process';
import { benchSoak } from './bench-soak';
import { ensureFerretDbBinary } from './local-services/ferretdb-build';
import { startFerretDb } from './local-services/ferretdb';
import { findFreePort } from './local-services/ports';
import { ensureRedis } from './local-services/redis';

const benchStart = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - benchStart) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
const out = (line: string) => process.stdout.write(`${line}\n`);

const PHASES = ['create', 'paths', 'lists', 'mcp', 'delivery', 'events', 'policy', 'runs', 'soak', 'engine'] as const;
type Phase = (typeof PHASES)[number];
/** Run when BENCH_ONLY is unset; the soak (ten minutes) and the engine (FerretDB alone) run only when asked for. */
const DEFAULT_PHASES: Phase[] = ['create', 'paths', 'mcp', 'delivery', 'events', 'policy', 'runs'];

interface Settings {
  phases: Set<Phase>;
  sizes: number[];
  requests: number;
  warmup: number;
  concurrencies: number[];
  createConcurrencies: number[];
  mongodbUrl?: string;
  redisUrl: string;
  deliveryRate: number;
  deliveryCount: number;
  soakSeconds: number;
  soakSampleSeconds: number;
  soakRate: number;
  eventCount: number;
  /** The engine phase's FerretDB binaries (none: the relay's build) and its alternated rounds. */
  ferretdbBinaries: string[];
  engineRounds: number;
}

function readSettings(env: NodeJS.ProcessEnv): Settings {
  const scale = env.BENCH_SCALE === undefined || env.BENCH_SCALE === '' ? 1 : Number(env.BENCH_SCALE);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 10)
    throw new Error(`BENCH_SCALE: must be a number in (0, 10] (got "${env.BENCH_SCALE}")`);
  const only = env.BENCH_ONLY ? env.BENCH_ONLY.split(',').map((p) => p.trim()) : undefined;
  const unknown = only?.find((p) => !(PHASES as readonly string[]).includes(p));
  if (unknown !== undefined)
    throw new Error(`BENCH_ONLY: phases from ${PHASES.join(', ')}, separated by commas (got "${env.BENCH_ONLY}")`);
  const positive = (name: string, fallback: number) => {
    const raw = env[name];
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}: must be a positive number (got "${raw}")`);
    return value;
  };
  const list = (name: string, fallback: string, least = 1) => {
    const values = (env[name] || fallback).split(',').map((v) => Number(v.trim()));
    const what = least === 0 ? 'whole numbers' : 'positive integers';
    if (values.some((v) => !Number.isInteger(v) || v < least))
      throw new Error(`${name}: must be ${what} separated by commas (got "${env[name]}")`);
    return values;
  };
  const phases = new Set<Phase>(only ? only.map((p) => (p === 'lists' ? 'paths' : (p as Phase))) : DEFAULT_PHASES);
  return {
    phases,
    // 0 is a fresh database (nothing seeded: the table of the issue that set the create targets); any other size at
    // least 100, for the reader's share of it.
    sizes: [
      ...new Set(
        list('BENCH_SIZES', '1000,10000,100000', 0).map((n) => (n === 0 ? 0 : Math.max(100, Math.round(n * scale)))),
      ),
    ].sort((a, b) => a - b),
    requests: Math.round(positive('BENCH_REQUESTS', 2000)),
    warmup: Math.round(positive('BENCH_WARMUP', 200)),
    concurrencies: list('BENCH_CONCURRENCY', '1,8'),
    createConcurrencies: list('BENCH_CREATE_CONCURRENCY', '1,8,32'),
    deliveryRate: positive('BENCH_DELIVERY_RATE', 2),
    deliveryCount: Math.round(positive('BENCH_DELIVERY_COUNT', 150)),
    soakSeconds: positive('BENCH_SOAK_SECONDS', 600),
    soakSampleSeconds: positive('BENCH_SOAK_SAMPLE_SECONDS', 30),
    soakRate: positive('BENCH_SOAK_RATE', 1),
    eventCount: Math.round(positive('BENCH_EVENT_COUNT', 300)),
    ferretdbBinaries: (env.BENCH_FERRETDB_BINARIES ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    engineRounds: Math.round(positive('BENCH_ENGINE_ROUNDS', 3)),
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

interface Servers {
  mongodbUrl: string;
  redisUrl: string;
  ferretPid: number | null;
  ferretMetricsUrl: string | null;
  /** The database name and the BullMQ prefix of this run. */
  runId: string;
  keyPepper: string;
  store: MongoStore;
}

async function startServers(settings: Settings, cleanup: Cleanup): Promise<Servers> {
  const runId = `bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  let mongodbUrl = settings.mongodbUrl;
  let ferretPid: number | null = null;
  let ferretMetricsUrl: string | null = null;
  if (!mongodbUrl) {
    const tempDir = await fs.mkdtemp(path.join(os.tmpdir(), 'handoff-bench-'));
    cleanup.add(`remove ${tempDir}`, () => fs.rm(tempDir, { recursive: true, force: true }));
    progress(`FerretDB binary: ${await ensureFerretDbBinary(progress)}; starting it on SQLite under ${tempDir}…`);
    const ferret = await startFerretDb({
      dataDir: path.join(tempDir, 'ferretdb'),
      debugPort: await findFreePort(),
      log: progress,
    });
    ferretMetricsUrl = ferret.metricsUrl;
    cleanup.add('stop FerretDB', () => ferret.stop());
    mongodbUrl = ferret.url;
    ferretPid = ferret.pid;
  }
  const redis = await ensureRedis(settings.redisUrl, progress);
  if (redis.started) cleanup.add('stop redis-server', () => redis.stop());
  cleanup.add(`delete the BullMQ keys ${runId}:*`, () => deleteRedisKeys(settings.redisUrl, runId));
  // The delivery and soak phases' own relays and baseline queues (bench-delivery.ts, bench-soak.ts).
  for (const suffix of ['_dl', '_sk'])
    cleanup.add(`delete the BullMQ keys ${runId}${suffix}:*`, () =>
      deleteRedisKeys(settings.redisUrl, `${runId}${suffix}`),
    );
  const store = await MongoStore.connect(mongodbUrl, runId);
  cleanup.add('close the bench store connection', () => store.close());
  if (settings.mongodbUrl) cleanup.add(`drop database ${runId}`, () => store.db.dropDatabase());
  return {
    mongodbUrl,
    redisUrl: settings.redisUrl,
    ferretPid,
    ferretMetricsUrl,
    runId,
    keyPepper: randomBytes(32).toString('hex'),
    store,
  };
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

/** The MCP phase against a relay process of its own on the run's database. */
async function mcpPhase(servers: Servers): Promise<void> {
  const relay = await startServedRelay({ ...servers, progress, out, concurrencies: [1], requests: 0, warmup: 0 });
  const client = new BenchHttpClient(relay.url);
  try {
    const sender = await register(client, relay.adminKey, 'bench-mcp-sender@acme');
    const recipient = await register(client, relay.adminKey, 'bench-mcp-recipient@acme');
    const params = handoffParams(recipient.handle, 'unused');
    let sequence = 0;
    await benchMcp({
      relayUrl: relay.url,
      senderKey: sender.apiKey,
      toolArguments: {
        to: recipient.handle,
        intent: params.intent,
        summary: params.message.parts[0]!.text,
        artifacts: params.artifacts,
      },
      directCreate: async () => {
        const result = await client.call(
          sender.apiKey,
          'message/send',
          handoffParams(recipient.handle, `${servers.runId}-mcp-${sequence++}`),
        );
        if (typeof result?.task_id !== 'string')
          throw new Error(`message/send answered without a task_id: ${JSON.stringify(result)}`);
      },
      progress,
      out,
    });
  } finally {
    client.close();
    await relay.stop();
  }
}

// ── main ────────────────────────────────────────────────────────────────────────────────────

async function main(): Promise<number> {
  const settings = readSettings(process.env);
  const cleanup = new Cleanup();
  /** The exit code of a bench told to stop (128 + the signal's number). */
  let interrupted: number | undefined;
  // Ctrl-C reaches the relays too (same process group); `kill` or a CI timeout's SIGTERM reaches the bench alone.
  const stop = (signal: NodeJS.Signals, code: number) => {
    interrupted = code;
    progress(`${signal}: stopping`);
    stopRelaysNow();
    // Cleaning up makes whatever main awaits fail; main then waits for the same cleanup.
    void cleanup.runAll().then(() => process.exit(code));
  };
  process.once('SIGINT', () => stop('SIGINT', 130));
  process.once('SIGTERM', () => stop('SIGTERM', 143));
  process.once('exit', stopRelaysNow);
  try {
    out(
      `handoff-relay bench · node ${process.version} · ${os.cpus().length} CPUs · sizes ${settings.sizes.join(', ')} · ${settings.requests} requests per measurement`,
    );
    if (settings.phases.has('engine')) {
      await benchEngine({
        binaries: settings.ferretdbBinaries,
        rounds: settings.engineRounds,
        requests: settings.requests,
        progress,
        out,
      });
      if (settings.phases.size === 1) return 0;
    }
    const servers = await startServers(settings, cleanup);
    out(`store: ${servers.store.capabilities.kind}`);
    const phase = { ...servers, progress, out };
    if (settings.phases.has('paths') || settings.phases.has('create')) {
      const create = settings.phases.has('create')
        ? async (size: number) =>
            void (await benchCreateAt(
              {
                ...phase,
                concurrencies: settings.createConcurrencies,
                requests: settings.requests,
                warmup: settings.warmup,
              },
              size,
            ))
        : undefined;
      await benchPaths({
        ...phase,
        sizes: settings.sizes,
        concurrencies: settings.concurrencies,
        requests: settings.requests,
        warmup: settings.warmup,
        measurePaths: settings.phases.has('paths'),
        ...(create ? { atSize: create } : {}),
      });
    }
    if (settings.phases.has('mcp')) await mcpPhase(servers);
    if (settings.phases.has('delivery')) {
      await benchDelivery({
        mongodbUrl: servers.mongodbUrl,
        redisUrl: servers.redisUrl,
        runId: servers.runId,
        keyPepper: servers.keyPepper,
        ferretPid: servers.ferretPid,
        rate: settings.deliveryRate,
        count: settings.deliveryCount,
        progress,
        out,
      });
    }
    if (settings.phases.has('policy')) await benchPolicy({ progress, out });
    if (settings.phases.has('runs'))
      await benchRuns({ ...phase, concurrencies: [1], requests: Math.min(settings.requests, 500), warmup: 20 });
    if (settings.phases.has('events')) {
      await benchEvents({ ...phase, concurrencies: [1], requests: 0, warmup: 20, count: settings.eventCount });
    }
    if (settings.phases.has('soak')) {
      await benchSoak({
        mongodbUrl: servers.mongodbUrl,
        redisUrl: servers.redisUrl,
        runId: servers.runId,
        ferretPid: servers.ferretPid,
        durationSeconds: settings.soakSeconds,
        sampleSeconds: settings.soakSampleSeconds,
        rate: settings.soakRate,
        progress,
        out,
      });
    }
    out(`\ntotal ${((performance.now() - benchStart) / 1000).toFixed(0)} s`);
    return 0;
  } catch (error) {
    if (interrupted !== undefined) return interrupted;
    process.stderr.write(`\nbench failed: ${(error as Error).stack ?? error}\n`);
    return 1;
  } finally {
    await cleanup.runAll();
  }
}

void main().then((code) => process.exit(code));
