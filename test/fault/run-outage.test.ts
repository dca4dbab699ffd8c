// Fault: a real runner (`handoff-relay agent` from dist/) works a handoff while Redis is stopped and the relay process
// is killed in the middle of the run and started again (same port, database and queue prefix). The fake agent's
// output is paced by gate files so each stage happens at a known point of the outage: before it, with Redis down,
// with the relay down too, and after the restart; between stages it keeps printing, so the faults land while
// batches are on their way. What a user would notice is checked: the run ends succeeded once,
// the handoff completes with the agent's report once, every progress line is in the thread once, the sender's
// event stream (resuming with Last-Event-ID) gets every event of the thread once and in order, and the agent was
// started once.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { startRedis } from '../../scripts/local-services/redis';
import { startAgentProcess, stopAgentProcess, type AgentProcess } from '../helpers/agent-process';
import { queuePrefix } from '../helpers/queue-keys';
import { ResumingSseReader } from '../helpers/sse-client';
import { testMongoUrl, uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { killRelayProcess, postJson, startRelayProcess, type RelayProcess } from './relay-process';

const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
const db = uniqueName('run_outage');
let redis: Awaited<ReturnType<typeof startRedis>>;
let relay: RelayProcess | undefined;
let runner: AgentProcess | undefined;
let reader: ResumingSseReader | undefined;
let mongo: MongoClient;
let env: Record<string, string>;
let root: string;

beforeAll(async () => {
  redis = await startRedis({ log: () => {} });
  mongo = await MongoClient.connect(testMongoUrl());
  root = await mkdtemp(join(tmpdir(), 'run-outage-'));
  env = {
    MONGODB_URL: testMongoUrl(),
    MONGODB_DB: db,
    REDIS_URL: redis.url,
    RELAY_QUEUE_PREFIX: queuePrefix('run_outage'),
    RELAY_ADMIN_KEY: adminKey,
    RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
    // A lease that outlasts the restart (the runner keeps the run), and progress taken as soon as it comes.
    RELAY_RUN_LEASE: '45s',
    RELAY_RUN_PROGRESS_INTERVAL: '100ms',
  };
  relay = await startRelayProcess(env);
});

afterAll(async () => {
  reader?.stop();
  if (runner) await stopAgentProcess(runner);
  await killRelayProcess(relay);
  await redis?.stop();
  await mongo
    ?.db(db)
    .dropDatabase()
    .catch(() => {});
  await mongo?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const post = (path: string, key: string, body: unknown) => postJson(relay!.url, path, key, body);

async function ok(key: string, method: string, params: unknown): Promise<any> {
  const body = await post('/a2a', key, { jsonrpc: '2.0', id: 1, method, params });
  if (!body.result) throw new Error(`${method} failed: ${JSON.stringify(body.error ?? body)}`);
  return body.result;
}

async function progressText(key: string, taskId: string): Promise<string> {
  const thread = await ok(key, 'tasks/get', { task_id: taskId });
  return thread.messages
    .filter((m: any) => m.payload?.kind === 'run_progress')
    .map((m: any) => m.body as string)
    .join('');
}

test('Redis stopped and the relay killed mid-run and restarted: the run finishes once, nothing lost or doubled on the thread or the stream', async () => {
  const alice = (await post('/admin/agents', adminKey, { handle: 'alice@acme', name: 'Alice', role: 'engineer' }))
    .api_key as string;
  const bob = (await post('/admin/agents', adminKey, { handle: 'bob@acme', name: 'Bob', role: 'engineer' }))
    .api_key as string;
  expect(alice && bob).toBeTruthy();
  const port = Number(new URL(relay!.url).port);
  reader = new ResumingSseReader(() => relay!.url, alice, '0');
  runner = await startAgentProcess({ relayUrl: relay!.url, key: bob, root, name: 'bob-laptop' });

  const sent = await ok(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { role: 'user', parts: [{ type: 'text', text: 'fix it, slowly mode:gated' }] },
  });
  const taskId = sent.task_id as string;
  const accepted = await ok(bob, 'tasks/update', { task_id: taskId, transition: 'accept', run: true });
  const runId = accepted.run.run_id as string;
  const gate = (n: number) => writeFile(join(runner!.workdir, `gate-${runId}-${n}`), '');
  const waiting = (n: number) =>
    waitUntil(async () => existsSync(join(runner!.workdir, `waiting-${runId}-${n}`)), `the agent to finish stage ${n}`);

  // Before the outage: the agent's first lines are thread messages, the run is running on bob's runner.
  await waiting(1);
  await waitUntil(
    async () => (await progressText(bob, taskId)).includes('before the outage 2'),
    'the first stage on the thread',
  );
  expect(await ok(bob, 'runs/get', { run_id: runId })).toMatchObject({
    status: 'running',
    runner: 'bob-laptop',
    claims: 1,
  });
  const batchesBefore = (await ok(bob, 'runs/get', { run_id: runId })).progress.batches as number;
  expect(batchesBefore).toBeGreaterThanOrEqual(1);

  // Redis stops: the relay still takes the agent's output (MongoDB holds the thread, the outbox and the logs).
  await redis.kill();
  await gate(1);
  await waiting(2);
  await waitUntil(
    async () => (await progressText(bob, taskId)).includes('at gate 2, tick 2'),
    'the output written while Redis is down on the thread',
    30_000,
  );

  // And the relay process dies: the runner keeps the agent running and its output buffered, retrying the relay.
  const mark = runner.output().length;
  relay!.child.kill('SIGKILL');
  expect(await relay!.exited).toBeNull();
  await gate(2);
  await waiting(3);
  await waitUntil(
    async () => /runs\/(progress|heartbeat): the relay is not answering/.test(runner!.output().slice(mark)),
    'the runner to find the relay gone',
    30_000,
  );

  // Both come back where they were; the agent goes on and finishes.
  redis = await startRedis({ port: redis.port, log: () => {} });
  relay = await startRelayProcess(env, { port });
  await gate(3);
  const run = await waitUntil(
    async () => {
      const view = await ok(bob, 'runs/get', { run_id: runId });
      return view.reported ? view : null;
    },
    `run ${runId} to be reported`,
    60_000,
  );

  // The agent was started once, and its one run succeeded once with its report.
  const log = await readFile(join(runner.workdir, 'invocations.log'), 'utf8');
  const starts = log.split('\n').filter((line) => line.startsWith(`${runId} `));
  expect(starts).toHaveLength(1);
  const agentPid = starts[0]!.split(' ')[1];
  expect(run).toMatchObject({
    status: 'succeeded',
    runner: 'bob-laptop',
    claims: 1,
    result: { reason: 'exit', exit_code: 0, report: `gated work done by ${agentPid}` },
  });
  expect(run.progress.batches).toBeGreaterThan(batchesBefore);
  // The runner says so once (its line comes after the relay's answer to runs/finish).
  await waitUntil(
    async () => runner!.output().includes(`run ${runId}: succeeded`),
    `the runner to log the finish; output:\n${runner.output()}`,
  );
  expect(runner.output().split(`run ${runId}: succeeded`)).toHaveLength(2);

  // The handoff completed once with the report; each line of output is on the thread once, in the order printed.
  const thread = await ok(alice, 'tasks/get', { task_id: taskId });
  expect(thread).toMatchObject({ status: 'completed', completed_summary: `gated work done by ${agentPid}` });
  const batches = thread.messages.filter((m: any) => m.payload?.kind === 'run_progress');
  const seqs = batches.map((m: any) => m.payload.seq as number);
  expect(new Set(seqs).size).toBe(seqs.length);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  const onThread = batches
    .map((m: any) => m.body as string)
    .join('')
    .split('\n')
    .filter(Boolean);
  const printed = (await readFile(join(runner.workdir, `printed-${runId}.log`), 'utf8')).split('\n').filter(Boolean);
  expect(onThread).toEqual(printed);
  for (const line of [
    'before the outage 2',
    'with Redis down',
    'with the relay down',
    'at gate 3, tick 1',
    'after the restart 2',
  ])
    expect(printed).toContain(line);
  const doc = await mongo.db(db).collection<any>('threads').findOne({ _id: taskId });
  const outbox = doc.outbox as { id: string; type: string; run_status?: string }[];
  const count = (type: string) => outbox.filter((e) => e.type === type).length;
  expect([count('run.queued'), count('run.started'), count('run.finished'), count('thread.completed')]).toEqual([
    1, 1, 1, 1,
  ]);
  expect(outbox.find((e) => e.type === 'run.finished')?.run_status).toBe('succeeded');
  expect(count('thread.message')).toBe(batches.length);

  // The sender's stream: every event of the thread once, in the thread's order, at increasing cursors.
  await waitUntil(
    async () => {
      const got = new Set(reader!.events.map((e) => JSON.parse(e.data).event_id as string));
      return outbox.every((e) => got.has(e.id));
    },
    `every event of the thread on alice's stream (${outbox.length})`,
    60_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}: got ${reader!.events.map((e) => e.event).join(', ')}`);
  });
  // Settled: nothing of the thread is left to enqueue, and alice's log holds nothing after what the reader got.
  await waitUntil(
    async () =>
      (await mongo
        .db(db)
        .collection<{ _id: string }>('threads')
        .countDocuments({ _id: taskId, pending_since: { $gte: new Date(0) } })) === 0,
    'the outbox to drain',
    30_000,
  );
  const lastCursor = reader.events.at(-1)!.id!;
  const rest = await fetch(`${relay!.url}/events?since=${lastCursor}&wait=1`, {
    headers: { authorization: `Bearer ${alice}`, accept: 'application/json' },
  }).then((r) => r.json());
  expect(rest.events).toEqual([]);
  const received = reader.events.map((e) => ({ cursor: Number(e.id), type: e.event, ...JSON.parse(e.data) }));
  expect(received.map((e) => e.event_id)).toEqual(outbox.map((e) => e.id));
  expect(received.map((e) => e.type)).toEqual(outbox.map((e) => e.type));
  const cursors = received.map((e) => e.cursor);
  expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
  expect(new Set(cursors).size).toBe(cursors.length);
  expect(received.slice(0, 4).map((e) => e.type)).toEqual([
    'thread.created',
    'thread.accepted',
    'run.queued',
    'run.started',
  ]);
  expect(received.slice(-2).map((e) => e.type)).toEqual(['run.finished', 'thread.completed']);
  // The outage was real: the stream was cut and resumed.
  expect(reader.reconnects).toBeGreaterThanOrEqual(1);
}, 240_000);
