// Age-based clean-up: what the relay writes and stops needing (idempotency records, read markers) is noted
// by `_id`, scheduled as a delayed job due when it expires, and deleted then only if it is still that old.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { KEEP_MS } from '../../relay-core/store/cleanup-ledger';
import { cleanUp } from '../../relay-core/queues/store-cleanup-job';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testMongoUrl, testRedisUrl, uniqueName } from '../helpers/test-env';

describe('cleanUp on the store', () => {
  let store: MongoStore;
  beforeAll(async () => {
    store = await MongoStore.connect(testMongoUrl(), uniqueName('cleanup'));
  });
  afterAll(async () => {
    await store?.db.dropDatabase();
    await store?.close();
  });

  const now = new Date();
  const aged = (kind: keyof typeof KEEP_MS) => new Date(now.getTime() - KEEP_MS[kind] - 60_000);
  const young = new Date(now.getTime() - 1_000);

  test('deletes only what is older than its keep time', async () => {
    const id = randomUUID();
    await store.idempotency.insertMany([
      { _id: 'old-key', request_hash: 'h', state: 'done', created_at: aged('idempotency') },
      { _id: 'new-key', request_hash: 'h', state: 'done', created_at: young },
    ]);
    await store.threadReads.insertMany([
      { _id: `${id}:old@acme`, seen: 1, at: aged('thread_reads') },
      { _id: `${id}:new@acme`, seen: 1, at: young },
    ]);

    expect(await cleanUp(store, 'idempotency', ['old-key', 'new-key', 'missing-key'], now)).toBe(1);
    expect((await store.idempotency.find({}).toArray()).map((d) => d._id)).toEqual(['new-key']);
    expect(await cleanUp(store, 'thread_reads', [`${id}:old@acme`, `${id}:new@acme`], now)).toBe(1);
    expect((await store.threadReads.find({}).toArray()).map((d) => d._id)).toEqual([`${id}:new@acme`]);
  });
});

describe('scheduling', () => {
  let relay: TestRelay;
  let verify: Queue;
  beforeAll(async () => {
    relay = await startTestRelay({ name: 'cleanup_jobs' });
    verify = new Queue('verify', { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix });
  });
  afterAll(async () => {
    await verify?.close();
    await relay?.stop();
  });

  test('the ids a relay wrote become delayed store-cleanup jobs, due when they expire', async () => {
    const alice = await relay.register({ handle: 'alice@acme' });
    const bob = await relay.register({ handle: 'bob@acme' });
    const { body } = await relay.rpc(alice, 'message/send', { recipient: 'bob@acme', intent: 'inform', message: { parts: [{ text: 'x' }] } });
    const threadId = body.result.task_id as string;
    await relay.rpc(bob, 'tasks/get', { task_id: threadId });
    const accepted = await relay.rpc(bob, 'tasks/update', { task_id: threadId, transition: 'accept', run: true, metadata: { client_idempotency_key: 'accept-once' } });
    expect(accepted.body.result.status).toBe('accepted');
    // Stopping the queued run is a mutating run call, recorded under an idempotency key of its own.
    const runId = (await relay.store.threads.findOne({ _id: threadId }))!.run!.id;
    expect((await relay.rpc(bob, 'runs/stop', { run_id: runId })).body.result.status).toBe('stopped');
    await relay.store.cleanup.flush();

    const jobs = (await verify.getJobs(['delayed'])).filter((j) => j.name === 'store-cleanup');
    const byKind = new Map(jobs.map((j) => [j.data.kind as string, { ids: j.data.ids as string[], due: j.timestamp + (j.opts.delay ?? 0) }]));
    expect(byKind.get('thread_reads')?.ids).toContain(`${threadId}:bob@acme`);
    expect(byKind.get('thread_reads')!.due).toBeGreaterThan(Date.now() + KEEP_MS.thread_reads - 60_000);
    expect([...byKind.keys()].sort()).toEqual(['idempotency', 'thread_reads']);
    // The accept's key, and the stop's (mutating run calls are recorded under a key of their own).
    expect(byKind.get('idempotency')?.ids).toHaveLength(2);
  });
});
