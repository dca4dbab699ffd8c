// Bench phase `paths` (BENCH_ONLY=paths, alias `lists`): every hot path against the relay as its own process
// (`cli.js start`, every role, Slack off), the database grown through BENCH_SIZES threads (1k, 10k, 100k by
// default; teammates a tenth of that). Per size and concurrency: create, tasks/get of a 20-message thread,
// tasks/list first page with and without a status filter, accept, append, agents/list by role, skill and repo;
// then the Slack delivery job (handoff → DM at a fake Slack) with a second relay process with Slack on.
// Target (PERFORMANCE.md): at the largest size every path costs ≤ 1.5× what it costs at the smallest.
import type { AgentDoc, ThreadDoc } from '../relay-core/domain/documents';
import type { MongoStore } from '../relay-core/store/mongo-store';
import { startFakeSlack } from './fake-slack/fake-slack-api';
import { BenchHttpClient } from './bench-http';
import { measure, summarize, type Figures, type PhaseOutput } from './bench-measure';
import { commandMeter, cpuMeter, readRssMiB, startRelayProcess, untilIdle, type RelayProcess } from './bench-process';
import { bareDeliveryBaseline } from './bench-delivery';
import {
  MAILBOX_EVERY,
  TARGET_REPO,
  TARGET_ROLE,
  TARGET_SKILL,
  TARGET_SKILL_HOLDERS,
  seed,
  seededAgent,
  seededThread,
  seedThreads,
} from './bench-seed';

/** What every phase that starts relay processes on the run's database gets. */
export interface ServedPhase extends PhaseOutput {
  /** The bench's own connection to the relay's database (seeding, templates). */
  store: MongoStore;
  mongodbUrl: string;
  redisUrl: string;
  /** Database name and queue prefix of the run. */
  runId: string;
  /** The relay processes' key pepper, the same for all so keys stay valid across them. */
  keyPepper: string;
  ferretPid: number | null;
  /** FerretDB's metrics, for commands per request (null on MONGODB_URL). */
  ferretMetricsUrl: string | null;
  concurrencies: number[];
  requests: number;
  warmup: number;
}

/** A relay process (every role unless `env` says otherwise) on the run's database, queues and key pepper. */
export function startServedRelay(opts: ServedPhase, env: Record<string, string> = {}): Promise<RelayProcess> {
  return startRelayProcess({
    mongodbUrl: opts.mongodbUrl,
    database: opts.runId,
    redisUrl: opts.redisUrl,
    prefix: opts.runId,
    keyPepper: opts.keyPepper,
    env: { RELAY_ROLES: 'api,bot,worker', ...env },
  });
}

export interface PathsOptions extends ServedPhase {
  sizes: number[];
  /** false: only grow the database and run `atSize` at each size (BENCH_ONLY=create). */
  measurePaths: boolean;
  /**
   * Runs with the relay stopped (the create phase's own relay and baseline): at the first and the last size beside
   * the paths (the targets' sizes), at every size without them.
   */
  atSize?: (size: number) => Promise<void>;
}

/** What one measurement gives: the client-side figures and the relay + FerretDB CPU during it and in the second after. */
export interface PathFigures extends Figures {
  serverCpuMsPerRequest: number;
  /** The same, each process's: the relay's, then FerretDB's (when the bench runs it). */
  cpuMsPerRequestEach?: number[];
  cpuAfterMs: number;
  /** Slack delivery only: the bare BullMQ add → worker → one HTTP POST at the same rate and size, same run. */
  baseline?: Figures;
  /** FerretDB commands per request during the measurement (the relay's background work included), when known. */
  commandsPerRequest?: number;
  /** The same by command, and finds by collection: `insert 3.0, find:threads 1.0, …`. */
  commandMix?: string;
  /** Slack delivery only: the DM's latency split at the create's answer, p50 / p99 of each part. */
  split?: { answer: [number, number]; afterAnswer: [number, number] };
}

export interface Teammate {
  handle: string;
  apiKey: string;
}

export async function register(
  client: BenchHttpClient,
  adminKey: string,
  handle: string,
  extra: Record<string, unknown> = {},
): Promise<Teammate> {
  const { status, body } = await client.post('/admin/agents', adminKey, {
    handle,
    name: handle.split('@')[0],
    role: 'engineer',
    ...extra,
  });
  if (status !== 201 || typeof body.api_key !== 'string')
    throw new Error(`POST /admin/agents ${handle}: HTTP ${status} ${JSON.stringify(body)}`);
  return { handle, apiKey: body.api_key };
}

/** A realistic handoff: a few hundred characters of summary, a diff, a file reference and a test command. */
export function handoffParams(recipient: string, idempotencyKey: string) {
  const diff = Array.from(
    { length: 30 },
    (_, n) =>
      `-  const old${n} = legacyUsers.page(${n});\n+  const page${n} = await users.list({ cursor, limit: ${n} });`,
  ).join('\n');
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

/** Runs `fn` `count` times at `concurrency` after a warm-up, with the CPU of `pids` during it and in the second after. */
export async function measureServed(
  pids: number[],
  concurrency: number,
  warmup: number,
  count: number,
  fn: (i: number) => Promise<void>,
  metricsUrl: string | null = null,
): Promise<PathFigures> {
  await measure(concurrency, warmup, (i) => fn(count + i));
  const meter = await cpuMeter(pids);
  const commands = metricsUrl ? await commandMeter(metricsUrl) : null;
  const sample = await measure(concurrency, count, fn);
  const duringEach = await meter.readEach();
  const during = duringEach.reduce((a, b) => a + b, 0);
  const counted = await commands?.read();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const after = (await meter.read()) - during;
  const n = sample.latenciesMs.length;
  const mix = counted?.byKind.map(([kind, k]) => `${kind} ${(k / n).toFixed(1)}`).join(', ');
  return {
    ...summarize(sample),
    serverCpuMsPerRequest: during / n,
    cpuMsPerRequestEach: duringEach.map((ms) => ms / n),
    cpuAfterMs: after,
    ...(counted ? { commandsPerRequest: counted.total / n, commandMix: mix } : {}),
  };
}

/** ` (relay 8.1 + FerretDB 5.2)` when FerretDB's CPU was measured apart. */
export function cpuSplit(figures: Pick<PathFigures, 'cpuMsPerRequestEach'>): string {
  const [relay, ferret] = figures.cpuMsPerRequestEach ?? [];
  return relay !== undefined && ferret !== undefined
    ? ` (relay ${relay.toFixed(1)} + FerretDB ${ferret.toFixed(1)})`
    : '';
}

interface PathRow {
  name: string;
  concurrency: number;
  bySize: Map<number, PathFigures>;
}

export async function benchPaths(opts: PathsOptions): Promise<void> {
  const { store } = opts;
  const start = () => startServedRelay(opts);
  let relay: RelayProcess = await start();
  let client = new BenchHttpClient(relay.url);
  const pids = () => [relay.pid, ...(opts.ferretPid ? [opts.ferretPid] : [])];
  try {
    const sender = await register(client, relay.adminKey, 'bench-sender@acme');
    const reader = await register(client, relay.adminKey, 'bench-reader@acme', { skills: ['typescript'] });
    const other = await register(client, relay.adminKey, 'bench-other@acme');
    const { task_id } = await client.call(
      sender.apiKey,
      'message/send',
      handoffParams(reader.handle, `${opts.runId}-template`),
    );
    const template = (await store.threads.findOne({ _id: task_id }))!;
    const agentTemplate = (await store.agents.findOne({ _id: reader.handle }))!;
    opts.out(
      `thread document: ${Buffer.byteLength(JSON.stringify(template))} bytes as JSON; relay pid ${relay.pid}; store: ${store.capabilities.kind}`,
    );

    // The 20-message thread tasks/get reads, written through the API.
    const { task_id: conversation } = await client.call(
      sender.apiKey,
      'message/send',
      handoffParams(reader.handle, `${opts.runId}-conversation`),
    );
    for (let i = 0; i < 20; i += 1) {
      const author = i % 2 ? sender : reader;
      await client.call(author.apiKey, 'message/send', {
        task_id: conversation,
        message: { role: 'user', parts: [{ type: 'text', text: `message ${i}: ${'details '.repeat(20)}` }] },
      });
    }

    const rows = new Map<string, PathRow>();
    const record = (name: string, concurrency: number, size: number, figures: PathFigures) => {
      const key = `${name}@${concurrency}`;
      const row = rows.get(key) ?? { name, concurrency, bySize: new Map() };
      row.bySize.set(size, figures);
      rows.set(key, row);
      opts.progress(
        `  ${name} c=${concurrency} at ${size.toLocaleString('en')}: ${figures.reqPerSec.toFixed(0)} req/s, p50 ${figures.p50.toFixed(1)} ms, p99 ${figures.p99.toFixed(1)} ms, ` +
          `relay+FerretDB ${figures.serverCpuMsPerRequest.toFixed(1)} ms CPU/req${cpuSplit(figures)}, ${figures.cpuAfterMs.toFixed(0)} ms CPU in the second after` +
          (figures.commandMix !== undefined
            ? `; FerretDB commands/req ${figures.commandsPerRequest!.toFixed(1)} (${figures.commandMix})`
            : ''),
      );
    };
    const epoch = Date.now() - 400 * 24 * 3600 * 1000;
    let threads = 0;
    let teammates = 0;
    let sequence = 0;
    for (const [index, size] of opts.sizes.entries()) {
      const first = index === 0;
      const last = index === opts.sizes.length - 1;
      const mates = Math.max(TARGET_SKILL_HOLDERS + 1, Math.round(size / 10));
      opts.progress(
        `paths: growing to ${size.toLocaleString('en')} threads and ${mates.toLocaleString('en')} teammates…`,
      );
      await seed(
        store.agents,
        teammates,
        mates,
        (i) => seededAgent(agentTemplate as AgentDoc, i, epoch),
        opts.progress,
      );
      teammates = mates;
      const seconds = await seedThreads(
        store,
        threads,
        size,
        (i) => seededThread(template, i, { reader: reader.handle, teammates: mates, epoch }),
        opts.progress,
      );
      opts.out(
        `seeded ${(size - threads).toLocaleString('en')} threads in ${seconds.toFixed(1)} s; reader's inbox ${Math.round(size / MAILBOX_EVERY).toLocaleString('en')} threads`,
      );
      threads = size;

      if (opts.atSize && (first || last || !opts.measurePaths)) {
        client.close();
        await relay.stop();
        await opts.atSize(size);
        relay = await start();
        client = new BenchHttpClient(relay.url);
      }

      if (!opts.measurePaths) continue;
      // What the seeding left to do (SQLite's checkpoint of what it wrote, the collectors) runs before the first path
      // is measured, not inside it.
      opts.out(`relay and FerretDB idle after ${((await untilIdle(pids())) / 1000).toFixed(1)} s`);
      const call = (who: Teammate, method: string, params: unknown) => async () =>
        void (await client.call(who.apiKey, method, params));
      for (const c of opts.concurrencies) {
        const n = opts.requests;
        const run = (fn: (i: number) => Promise<void>) =>
          measureServed(pids(), c, opts.warmup, n, fn, opts.ferretMetricsUrl);
        record(
          'create message/send',
          c,
          size,
          await run(
            async () =>
              void (await client.call(
                sender.apiKey,
                'message/send',
                handoffParams(other.handle, `${opts.runId}-p${sequence++}`),
              )),
          ),
        );
        record('tasks/get (20 messages)', c, size, await run(call(reader, 'tasks/get', { task_id: conversation })));
        record(
          'tasks/list first page',
          c,
          size,
          await run(call(reader, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 20 } })),
        );
        record(
          'tasks/list first page, status',
          c,
          size,
          await run(
            call(reader, 'tasks/list', {
              filter: { role: 'recipient', status: ['pending', 'accepted'] },
              page: { limit: 20 },
            }),
          ),
        );
        record('agents/list role', c, size, await run(call(reader, 'agents/list', { role: TARGET_ROLE })));
        record('agents/list skill', c, size, await run(call(reader, 'agents/list', { skill: TARGET_SKILL })));
        record('agents/list repo', c, size, await run(call(reader, 'agents/list', { repo: TARGET_REPO })));
        // A teammate changes their card and someone lists the team: a card write, then a listing.
        record(
          'card change + agents/list',
          c,
          size,
          await run(async (i) => {
            const changed = await client.send('PUT', '/agents/me/card', reader.apiKey, {
              skills: [`bench-skill-${i % 2}`],
            });
            if (changed.status !== 200)
              throw new Error(
                `PUT /agents/me/card answered ${changed.status}: ${JSON.stringify(changed.body).slice(0, 200)}`,
              );
            await call(reader, 'agents/list', { role: TARGET_ROLE })();
          }),
        );
        await client.send('PUT', '/agents/me/card', reader.apiKey, { skills: ['typescript'] });

        // Appends spread over 20 open threads of the reader's, written through the API.
        const targets: string[] = [];
        for (let i = 0; i < 20; i += 1)
          targets.push(
            (
              await client.call(
                sender.apiKey,
                'message/send',
                handoffParams(reader.handle, `${opts.runId}-a${sequence++}`),
              )
            ).task_id,
          );
        record(
          'append message/send',
          c,
          size,
          await run(async (i) => {
            await client.call(i % 2 ? sender.apiKey : reader.apiKey, 'message/send', {
              task_id: targets[i % targets.length],
              message: { role: 'user', parts: [{ type: 'text', text: `reply ${i}` }] },
            });
          }),
        );

        // Accepts of pending handoffs to the reader, seeded in bulk like the rest (they add to the size: reported).
        const pending: string[] = [];
        const base = Date.now();
        await seedThreads(
          store,
          0,
          n + opts.warmup,
          (i) => {
            const doc = seededThread(template, 0, { reader: reader.handle, teammates: mates, epoch });
            const at = new Date(base + i);
            pending.push(doc._id);
            return {
              ...doc,
              from: sender.handle,
              created_at: at,
              updated_at: at,
              status_history: [{ ...template.status_history[0]!, by: sender.handle, at }],
            } as ThreadDoc;
          },
          () => {},
        );
        record(
          'accept tasks/update',
          c,
          size,
          await run(async (i) => {
            const answer = await client.call(reader.apiKey, 'tasks/update', {
              task_id: pending[i],
              transition: 'accept',
            });
            if (answer?.status !== 'accepted') throw new Error(`accept answered ${JSON.stringify(answer)}`);
          }),
        );
        threads += n + opts.warmup + 20;
      }
      opts.out(
        `relay RSS after size ${size.toLocaleString('en')}: ${(await readRssMiB(relay.pid)).toFixed(0)} MiB; threads now ${(await store.threads.estimatedDocumentCount()).toLocaleString('en')}`,
      );

      client.close();
      await relay.stop();
      const delivery = await slackDelivery(opts, sender, size);
      const row = rows.get('Slack delivery (handoff → DM)@1') ?? {
        name: 'Slack delivery (handoff → DM)',
        concurrency: 1,
        bySize: new Map(),
      };
      row.bySize.set(size, delivery);
      rows.set('Slack delivery (handoff → DM)@1', row);
      const mix =
        delivery.commandMix === undefined
          ? ''
          : `; FerretDB commands per handoff ${delivery.commandsPerRequest!.toFixed(1)} (${delivery.commandMix})`;
      opts.progress(
        `  Slack delivery at ${size.toLocaleString('en')}: p50 ${delivery.p50.toFixed(1)} ms, p99 ${delivery.p99.toFixed(1)} ms${mix}`,
      );
      const { answer, afterAnswer } = delivery.split!;
      opts.out(
        `Slack delivery at ${size.toLocaleString('en')}: send → create answered p50 ${answer[0].toFixed(1)} / p99 ${answer[1].toFixed(1)} ms, ` +
          `answered → DM p50 ${afterAnswer[0].toFixed(1)} / p99 ${afterAnswer[1].toFixed(1)} ms; bare baseline p50 ${delivery.baseline!.p50.toFixed(1)} / p99 ${delivery.baseline!.p99.toFixed(1)} ms`,
      );
      relay = await start();
      client = new BenchHttpClient(relay.url);
    }
    if (opts.measurePaths) {
      printPaths(opts, [...rows.values()]);
      printAgainstPeer(opts, [...rows.values()]);
    }
  } finally {
    client.close();
    await relay.stop();
  }
}

/** The Slack delivery measurement: handoffs per second (open loop) and how many, after ten warm-up ones. */
const DELIVERY_RATE = 5;
const DELIVERY_COUNT = 150;
/** Issue 12's target for the DM at the largest size, against the bare baseline. */
const DELIVERY_P99_VS_BASELINE = 3;

/**
 * The Slack delivery job at this size: handoffs sent open-loop at DELIVERY_RATE to a recipient linked to a
 * fake Slack user, through a relay process with Slack on; latency from the send to chat.postMessage at the fake.
 */
async function slackDelivery(opts: PathsOptions, sender: Teammate, size: number): Promise<PathFigures> {
  // The bare baseline first, at the same rate and count, with no relay running (under the delivery phase's prefix,
  // which the bench deletes at the end).
  const baseline = await bareDeliveryBaseline(
    { redisUrl: opts.redisUrl, rate: DELIVERY_RATE },
    `${opts.runId.slice(0, 30)}_dl`,
    DELIVERY_COUNT,
  );
  const slack = await startFakeSlack();
  const relay = await startServedRelay(opts, {
    SLACK_BOT_TOKEN: slack.token,
    SLACK_SIGNING_SECRET: 'bench-signing-secret-0123456789',
    SLACK_API_URL: slack.url,
  });
  const client = new BenchHttpClient(relay.url);
  try {
    // A recipient of its own per size: a Slack user links to one teammate.
    const slackUser = `U0DM${size}`;
    slack.addUser(slackUser);
    const recipient = await register(client, relay.adminKey, `bench-dm-${size}@acme`, { slack_user_id: slackUser });
    const sentAt = new Map<string, number>();
    const answeredAt = new Map<string, number>();
    const count = DELIVERY_COUNT;
    const meter = await cpuMeter([relay.pid, ...(opts.ferretPid ? [opts.ferretPid] : [])]);
    // Everything a handoff costs FerretDB: its create, its DM's job and its webhooks job (the event logs).
    const commands = opts.ferretMetricsUrl ? await commandMeter(opts.ferretMetricsUrl) : null;
    const started = Date.now();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < count + 10; i += 1) {
      const due = started + (i * 1000) / DELIVERY_RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const marker = `bench-dm ${size}-${i}.`;
      sentAt.set(marker, Date.now());
      sends.push(
        client
          .call(sender.apiKey, 'message/send', {
            recipient: recipient.handle,
            intent: 'inform',
            message: { parts: [{ type: 'text', text: `${marker} The API pages users now.` }] },
          })
          .then(() => void answeredAt.set(marker, Date.now())),
      );
    }
    await Promise.all(sends);
    const arrived = new Map<string, number>();
    const deadline = Date.now() + 120_000;
    while (arrived.size < count + 10 && Date.now() < deadline) {
      for (const posted of slack.callsTo('chat.postMessage')) {
        const marker = /bench-dm \d+-\d+\./.exec(String(posted.args.text))?.[0];
        if (marker && !arrived.has(marker)) arrived.set(marker, posted.at);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const cpu = await meter.read();
    const elapsedMs = Date.now() - started;
    // The jobs that follow a DM (its record, the event logs) settle within a second.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const counted = await commands?.read();
    const sent = count + 10;
    // The first ten are the warm-up.
    const measured = [...sentAt].slice(10).filter(([marker]) => arrived.has(marker));
    const latencies = measured.map(([marker, at]) => arrived.get(marker)! - at);
    if (latencies.length < count)
      opts.out(`Slack delivery at ${size}: only ${latencies.length} of ${count} DMs arrived within 2 minutes`);
    // Where a DM's time goes: the create until its answer (the job is queued before it answers), then the job.
    const p50p99 = (latenciesMs: number[]): [number, number] => {
      const { p50, p99 } = summarize({ latenciesMs, elapsedMs, cpuMs: 0 });
      return [p50, p99];
    };
    return {
      ...summarize({ latenciesMs: latencies, elapsedMs, cpuMs: 0 }),
      split: {
        answer: p50p99(measured.map(([marker, at]) => answeredAt.get(marker)! - at)),
        afterAnswer: p50p99(measured.map(([marker]) => arrived.get(marker)! - answeredAt.get(marker)!)),
      },
      serverCpuMsPerRequest: cpu / sent,
      cpuAfterMs: Number.NaN,
      baseline,
      ...(counted
        ? {
            commandsPerRequest: counted.total / sent,
            commandMix: counted.byKind.map(([kind, k]) => `${kind} ${(k / sent).toFixed(1)}`).join(', '),
          }
        : {}),
    };
  } finally {
    client.close();
    await relay.stop();
    await slack.close();
  }
}

/**
 * The peer relay's CPU per request (its process and its PostgreSQL backends), measured side by side with handoff-relay
 * at 1017f57 on 2026-12-04 (PERFORMANCE.md), by path, concurrency and size: [peer, 1017f57 that day].
 */
const PEER_CPU_MS: Record<string, [number, number]> = {
  'create message/send@1@10000': [10.6, 17.7],
  'create message/send@8@10000': [7.0, 8.6],
  'tasks/get (20 messages)@1@10000': [6.1, 12.6],
  'tasks/list first page@1@10000': [9.1, 33.9],
  'tasks/list first page@1@30000': [12.1, 46.4],
  'accept tasks/update@1@10000': [7.6, 21.5],
  'accept tasks/update@1@30000': [7.5, 25.6],
  'agents/list role@1@10000': [2.5, 2.2],
};
/** The FerretDB commands a request may cost (PERFORMANCE.md). */
const COMMANDS_TARGET: Record<string, number> = {
  'create message/send': 3,
  'accept tasks/update': 3,
  'tasks/get (20 messages)': 2,
  'tasks/list first page': 2,
};

/**
 * This run's CPU per request (the relay and its FerretDB, during the phase and in the second after) beside the peer's
 * where PERFORMANCE.md has it. The peer was measured on another machine of this kind, and machines differ: the last
 * column is the same ratio the day the peer was measured (1017f57 against the peer); run 1017f57 here as well to
 * compare across machines (docs/benchmarks.md).
 */
function printAgainstPeer(opts: PathsOptions, rows: PathRow[]): void {
  const lines: string[] = [];
  for (const row of rows)
    for (const [size, figures] of row.bySize) {
      const peer = PEER_CPU_MS[`${row.name}@${row.concurrency}@${size}`];
      const target = COMMANDS_TARGET[row.name];
      if (!peer) continue;
      const cpu = figures.serverCpuMsPerRequest + figures.cpuAfterMs / opts.requests;
      const commands =
        figures.commandsPerRequest === undefined
          ? ''
          : `, ${figures.commandsPerRequest.toFixed(1)} FerretDB commands${target ? ` (target ≤ ${target})` : ''}`;
      lines.push(
        `  ${row.name} c=${row.concurrency} at ${size.toLocaleString('en')}: ${cpu.toFixed(1)} ms vs the peer's ${peer[0]} (${(cpu / peer[0]).toFixed(2)}×; 1017f57 that day ${(peer[1] / peer[0]).toFixed(2)}×)${commands}`,
      );
    }
  if (lines.length === 0) return;
  opts.out('');
  opts.out(
    'Against the peer relay (CPU ms per request with the second after; the peer measured on 2026-12-04 on another box of this kind, beside 1017f57, whose ratio that day follows: boxes differ, so run 1017f57 here too, as docs/benchmarks.md says):',
  );
  for (const line of lines) opts.out(line);
}

function printPaths(opts: PathsOptions, rows: PathRow[]): void {
  const sizes = opts.sizes;
  const smallest = sizes[0]!;
  const largest = sizes[sizes.length - 1]!;
  const k = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n));
  opts.out('');
  opts.out(
    `Hot paths by history size (relay as its own process, every role; p50 / p99 ms, req/s, relay+FerretDB CPU ms per request; ratio = ${k(largest)} vs ${k(smallest)}, cost = 1/throughput)`,
  );
  const header = [
    'path',
    'c',
    ...sizes.map((s) => `${k(s)} p50/p99 ms`),
    ...sizes.map((s) => `${k(s)} req/s`),
    ...sizes.map((s) => `${k(s)} cpu/req`),
    ...sizes.map((s) => `${k(s)} cmds/req`),
    'cost ratio',
    'p50 ratio',
    'target ≤1.5×',
  ];
  const lines = rows.map((row) => {
    const small = row.bySize.get(smallest);
    const big = row.bySize.get(largest);
    const cost = small && big ? small.reqPerSec / big.reqPerSec : Number.NaN;
    const p50 = small && big ? big.p50 / small.p50 : Number.NaN;
    const delivery = row.name.startsWith('Slack delivery');
    const met = delivery ? big!.p99 <= 1.5 * small!.p99 : cost <= 1.5 && p50 <= 1.5;
    return [
      row.name,
      String(row.concurrency),
      ...sizes.map((s) =>
        row.bySize.get(s) ? `${row.bySize.get(s)!.p50.toFixed(1)} / ${row.bySize.get(s)!.p99.toFixed(1)}` : '-',
      ),
      ...sizes.map((s) => (row.bySize.get(s) && !delivery ? row.bySize.get(s)!.reqPerSec.toFixed(0) : '-')),
      ...sizes.map((s) => (row.bySize.get(s) ? row.bySize.get(s)!.serverCpuMsPerRequest.toFixed(1) : '-')),
      ...sizes.map((s) => row.bySize.get(s)?.commandsPerRequest?.toFixed(1) ?? '-'),
      delivery ? '-' : `${cost.toFixed(2)}×`,
      `${p50.toFixed(2)}×${delivery ? ` (p99 ${(big!.p99 / small!.p99).toFixed(2)}×)` : ''}`,
      met ? 'PASS' : 'MISS',
    ];
  });
  const widths = header.map((h, col) => Math.max(h.length, ...lines.map((l) => l[col]!.length)));
  const format = (cells: string[]) =>
    cells
      .map((c, col) => (col === 0 ? c.padEnd(widths[col]!) : c.padStart(widths[col]!)))
      .join('  ')
      .trimEnd();
  opts.out(format(header));
  opts.out(format(widths.map((w) => '-'.repeat(w))));
  for (const line of lines) opts.out(format(line));
  const delivery = rows.find((r) => r.name.startsWith('Slack delivery'));
  if (delivery) {
    const vs = sizes.map((s) => {
      const f = delivery.bySize.get(s);
      return f?.baseline
        ? `${k(s)} p99 ${f.p99.toFixed(0)} vs ${f.baseline.p99.toFixed(0)} ms (${(f.p99 / f.baseline.p99).toFixed(1)}×), p50 ${f.p50.toFixed(0)} vs ${f.baseline.p50.toFixed(0)}`
        : `${k(s)} -`;
    });
    const big = delivery.bySize.get(largest);
    const met = big?.baseline ? big.p99 <= DELIVERY_P99_VS_BASELINE * big.baseline.p99 : false;
    opts.out(
      `Slack delivery vs a bare BullMQ add → worker → one HTTP POST (same rate, same run): ${vs.join(' · ')}; target at ${k(largest)} p99 ≤ ${DELIVERY_P99_VS_BASELINE}× → ${met ? 'PASS' : 'MISS'}`,
    );
  }
  opts.out(
    `(CPU in the second after each phase, ms: ${rows
      .filter((r) => !r.name.startsWith('Slack'))
      .map(
        (r) =>
          `${r.name}@${r.concurrency} ${sizes.map((s) => r.bySize.get(s)?.cpuAfterMs.toFixed(0) ?? '-').join('/')}`,
      )
      .join('; ')})`,
  );
}
