// A relay started on the database a layout-2 relay (1017f57, on its embedded FerretDB) wrote and left when it was
// killed mid-write (test/fixtures/layout-2/, recorded by scripts/record-layout2-fixture.ts) migrates it and then
// serves every old teammate, thread, list, approval, timer, run and webhook delivery as the old relay did.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BSON, MongoClient, type Document } from 'mongodb';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { migrateStore, SCHEMA_VERSION, schemaVersion } from '../../relay-core/store/migrate';
import { startFakeSlack, type FakeSlack, type FakeSlackMessage } from '../../scripts/fake-slack/fake-slack-api';
import { WebhookReceiver, echoChallenge, verifyWebhook } from '../../scripts/webhook-receiver';
import { text } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';
import { testMongoUrl, uniqueName } from '../helpers/test-env';
import { timerSteps } from '../helpers/timer-steps';
import { waitUntil } from '../helpers/wait-until';
import { armedTimerOf } from '../helpers/thread-docs';

const FIXTURE = join(__dirname, '..', 'fixtures', 'layout-2');

interface Recording {
  recorded_at: string;
  key_pepper: string;
  keys: Record<string, string>;
  webhook_secrets: Record<string, string>;
  env: Record<string, string>;
  threads: Record<string, string>;
  approvals: { held_create: string; held_accept: string; held_timeout: string };
  /** The params of a create made under a client idempotency key. */
  idempotent_create: Record<string, unknown>;
  runs: { finished: string; running: string };
  push_config: { task: string; id: string };
  collections: Record<string, { documents: number; indexes: Array<{ key: Document; name: string; unique?: boolean }> }>;
}
/** The team's Slack as the old relay left it: its users, and the messages of each DM channel (without their blocks). */
interface SlackWorkspace {
  users: Record<string, string>;
  messages: Record<string, Array<Pick<FakeSlackMessage, 'ts' | 'thread_ts' | 'text' | 'metadata'>>>;
}
interface OldAnswers {
  /** Per thread (by label): what tasks/get answered each teammate (`ok` or the error's code), and one answer. */
  reads: Record<string, { readers: Record<string, string>; view: Record<string, unknown> }>;
  /** Per teammate: every tasks/list page walked, as [thread id, status]. */
  lists: Record<string, { recipient: Array<[string, string]>; sender: Array<[string, string]> }>;
}

const recording = JSON.parse(readFileSync(join(FIXTURE, 'recording.json'), 'utf8')) as Recording;
const old = JSON.parse(readFileSync(join(FIXTURE, 'old-answers.json'), 'utf8')) as OldAnswers;
/** The fixture's documents as recorded (dates not yet moved), by collection. */
const fixture = new Map(
  readdirSync(join(FIXTURE, 'db')).map((file) => [
    file.replace(/\.json$/, ''),
    BSON.EJSON.parse(readFileSync(join(FIXTURE, 'db', file), 'utf8'), { relaxed: false }) as Document[],
  ]),
);
const docsOf = (collection: string) => fixture.get(collection) ?? [];
const threadOf = (id: string) => docsOf('threads').find((doc) => doc._id === id) as unknown as ThreadDoc;
const t = recording.threads;
const keys = recording.keys;
/** What layout 2 kept where the embedded FerretDB served no index; later layouts read indexes instead. */
const LEGACY = [
  'mailbox_entries',
  'mailbox_heads',
  'mailbox_blocks',
  'message_blocks',
  'timer_due',
  'timer_due_heads',
  'timer_due_marks',
  'event_marks',
  'event_heads',
  'approvals_open',
];
const CLAIMS = ['thread_writes', 'agent_writes', 'run_writes', 'run_box_writes', 'push_config_writes'];

const workspace = JSON.parse(readFileSync(join(FIXTURE, 'slack.json'), 'utf8')) as SlackWorkspace;
const U = workspace.users;

const clock = new TestClock();
const dbName = uniqueName('migration_layout2');
let relay: TestRelay;
let slack: FakeSlack;
const hooks = new WebhookReceiver();
/** Where the recording's webhook receiver listened; the test's own stands in for it (loadFixture). */
const oldHooks = new URL(docsOf('agents').find((doc) => doc.notification)!.notification.url as string).origin;
/**
 * How far the fixture's dates are moved: the database is loaded as it was the moment it was recorded, so what was
 * due then is due now and what was days away still is (unmoved, every timer and token would be long past).
 */
let shiftMs = 0;

beforeAll(async () => {
  await hooks.start();
  // As at the recording: dave's receiver answers its challenge and fails every event.
  hooks.answer = (request) =>
    request.path === '/dave' && request.json?.type !== 'endpoint.challenge'
      ? { status: 500, body: 'down' }
      : echoChallenge(request);
  shiftMs = await loadFixture(dbName);
  slack = await openWorkspace();
  relay = await startTestRelay({
    name: 'migration_layout2',
    slack,
    clock,
    env: {
      MONGODB_DB: dbName,
      RELAY_KEY_PEPPER: recording.key_pepper,
      ...recording.env,
      RELAY_TIMER_SWEEP_INTERVAL: '200ms',
      RELAY_WEBHOOK_ALLOW_PRIVATE: '1',
      RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
    },
  });
}, 60_000);

afterAll(async () => {
  await relay?.store.db.dropDatabase();
  await relay?.stop();
  await slack?.close();
  await hooks.stop();
});

async function loadFixture(name: string): Promise<number> {
  const shift = Date.now() - Date.parse(recording.recorded_at);
  const client = await MongoClient.connect(testMongoUrl());
  try {
    const db = client.db(name);
    for (const [collection, docs] of fixture) {
      // Empty collections too: the migration decides by which collections exist.
      await db.createCollection(collection);
      if (docs.length > 0)
        await db.collection(collection).insertMany(docs.map((doc) => moved(doc, shift, hooks.url('')) as Document));
      for (const { key, name: indexName, unique } of recording.collections[collection]?.indexes ?? []) {
        await db.collection(collection).createIndex(key, { name: indexName, ...(unique ? { unique } : {}) });
      }
    }
  } finally {
    await client.close();
  }
  return shift;
}

/** A fake Slack holding what the team's Slack held: the relay replies under and redraws the old DMs by their ts. */
async function openWorkspace(): Promise<FakeSlack> {
  const fake = await startFakeSlack();
  for (const user of Object.values(U)) {
    fake.addUser(user);
    const opened = await fetch(`${fake.url}conversations.open`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ users: user }),
    });
    expect(((await opened.json()) as { ok: boolean }).ok).toBe(true);
  }
  for (const [channel, list] of Object.entries(workspace.messages))
    fake.messages.set(
      channel,
      list.map((m) => ({ ...m, blocks: [], updated: 0 })),
    );
  return fake;
}

/**
 * Every date in a document moved by `ms`, and the webhook and push URLs pointed at `receiver` (the BSON number types
 * EJSON read are kept as they are).
 */
function moved(value: unknown, ms: number, receiver: string): unknown {
  if (value instanceof Date) return new Date(value.getTime() + ms);
  if (typeof value === 'string' && value.startsWith(`${oldHooks}/`)) return receiver + value.slice(oldHooks.length);
  if (Array.isArray(value)) return value.map((v) => moved(v, ms, receiver));
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, moved(v, ms, receiver)]));
  }
  return value;
}

/** An old answer's timestamps moved as the fixture's dates were, to compare with the new relay's answer. */
function movedIso(value: unknown): unknown {
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(value))
    return new Date(Date.parse(value) + shiftMs).toISOString();
  if (Array.isArray(value)) return value.map(movedIso);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, movedIso(v)]));
  return value;
}

async function ok(key: string, method: string, params: unknown): Promise<any> {
  const { body } = await relay.rpc(key, method, params);
  if (!body.result) throw new Error(`${method} failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

const { fired, posted } = timerSteps(() => ({ relay, slack }), clock);

/** Waits until Slack's message `ts` in `channel` has been redrawn (chat.update) since the recording. */
async function redrawn(channel: string, ts: string, what: string): Promise<void> {
  await waitUntil(async () => (slack.messages.get(channel)?.find((m) => m.ts === ts)?.updated ?? 0) > 0, what);
}

test('the fixture is what a layout-2 relay on FerretDB leaves: its structures, its claims, one of them unapplied', () => {
  expect(docsOf('meta').find((doc) => doc._id === 'schema')?.value).toEqual(new BSON.Int32(2));
  for (const name of [...LEGACY, ...CLAIMS]) expect(fixture.has(name)).toBe(true);
  const statuses = new Set(docsOf('threads').map((doc) => doc.status));
  expect([...statuses].sort()).toEqual([
    'accepted',
    'awaiting_approval',
    'cancelled',
    'completed',
    'declined',
    'expired',
    'pending',
    'rejected',
    'unclaimed',
  ]);
  const claim = docsOf('thread_writes').find((doc) => doc.thread_id === t.unapplied_claim)!;
  expect(Number(claim.version)).toBeGreaterThan(Number(threadOf(t.unapplied_claim).version));
});

test('start migrated it: the current layout, the legacy collections and claims dropped, the unapplied claim in its thread, Slack records kept', async () => {
  expect(await schemaVersion(relay.store)).toBe(SCHEMA_VERSION);
  const names = (await relay.store.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  for (const name of [...LEGACY, ...CLAIMS]) expect(names).not.toContain(name);
  const metaIds = (await relay.store.meta.find({}, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id);
  expect(
    metaIds.filter((id) => /^(agents_log|mailboxes_placed|timers_due_cursor|open_approvals_placed)/.test(id)),
  ).toEqual([]);

  const claim = docsOf('thread_writes').find((doc) => doc.thread_id === t.unapplied_claim)!;
  const migrated = (await relay.store.threads.findOne({ _id: t.unapplied_claim }))!;
  expect(migrated.version).toBeGreaterThanOrEqual(Number(claim.version));
  expect(Object.keys(migrated.slack_pending ?? {})).toEqual(Object.keys(claim.doc.slack_pending));

  // What the old relay recorded of its Slack posts stays with each thread (a DM's ts is how it is redrawn).
  for (const doc of docsOf('threads').filter((d) => d.slack)) {
    const now = (await relay.store.threads.findOne({ _id: doc._id }))!;
    expect([now.slack?.ts, now.slack_sender?.ts]).toEqual([doc.slack.ts, doc.slack_sender?.ts]);
  }
  for (const name of ['slack_links', 'webhook_deliveries', 'event_log', 'messages', 'runs', 'approvals']) {
    expect(await relay.store.db.collection(name).countDocuments({})).toBeGreaterThanOrEqual(
      recording.collections[name]!.documents,
    );
  }
});

test('every old teammate’s key still authenticates, and the directory finds them by role, skill and owned repo', async () => {
  for (const [handle, key] of Object.entries(keys)) {
    const me = await relay.rest('GET', '/agents/me', key);
    expect([me.status, me.body.handle]).toEqual([200, handle]);
  }
  expect((await relay.rest('GET', '/agents/me', `${keys['alice@acme']}x`)).status).toBe(401);
  const alice = keys['alice@acme']!;
  const handles = async (filter: Record<string, string>) =>
    (await ok(alice, 'agents/list', filter)).teammates.map((card: any) => card.handle).sort();
  expect(await handles({ skill: 'react' })).toEqual(['bob@acme', 'carol@acme']);
  expect(await handles({ role: 'frontend' })).toEqual(['bob@acme', 'carol@acme']);
  expect(await handles({ repo: 'apps/web/' })).toEqual(['bob@acme']);
  expect(await handles({ repo: 'apps/' })).toEqual(['bob@acme', 'carol@acme']);
  expect(await handles({ repo: 'infra/' })).toEqual(['erin@acme']);
});

test('every old thread reads back through tasks/get as the old relay answered it, to the same teammates', async () => {
  for (const [label, { readers, view }] of Object.entries(old.reads)) {
    const first = Object.keys(readers).find((handle) => readers[handle] === 'ok')!;
    for (const [handle, outcome] of Object.entries(readers)) {
      const { body } = await relay.rpc(keys[handle], 'tasks/get', { task_id: t[label] });
      expect([label, handle, body.result ? 'ok' : body.error.data.code]).toEqual([label, handle, outcome]);
      if (handle !== first) continue;
      // The inbox link is signed under the same pepper: only the relay's address changed.
      const { inbox_url: oldLink, ...rest } = view;
      const { inbox_url: newLink, ...answer } = body.result;
      expect(new URL(newLink).search).toBe(new URL(oldLink as string).search);
      expect(answer).toEqual(movedIso(rest));
      // The link in the old DMs opens the thread on the new relay.
      const { pathname, search } = new URL(oldLink as string);
      const page = await fetch(`${relay.url}${pathname}${search}`);
      expect([label, page.status]).toEqual([label, 200]);
      expect(await page.text()).toContain(String(view.thread_id));
    }
  }
  // Messages in order, with their artifacts: the 26 of the long thread span the old relay's message blocks.
  const long = await ok(keys['bob@acme']!, 'tasks/get', { task_id: t.long });
  expect(long.messages.map((m: any) => m.sequence_no)).toEqual(Array.from({ length: 26 }, (_, i) => i + 1));
  expect(long.messages[6]).toMatchObject({
    body: 'message 7 from bob',
    artifacts: [{ type: 'file_ref', path: 'services/api/cache_7.go', lines: '7-12' }],
  });
  const pending = await ok(keys['bob@acme']!, 'tasks/get', { task_id: t.pending });
  expect(pending.artifacts.map((a: any) => a.type)).toEqual([
    'file_diff',
    'file_ref',
    'test_command',
    'api_contract',
    'link',
    'screenshot',
  ]);
});

test('a create the old relay answered, asked again under its idempotency key, answers the same thread', async () => {
  const before = await relay.store.threads.countDocuments({});
  const again = await ok(keys['alice@acme']!, 'message/send', recording.idempotent_create);
  expect(again.task_id).toBe(t.pending);
  expect(await relay.store.threads.countDocuments({})).toBe(before);
});

test('tasks/list pages give each teammate the threads the old relay listed, newest first, each once', async () => {
  // The two threads made after the old relay's lists were read are the newest of all.
  const after: Record<string, { recipient: string[]; sender: string[] }> = {
    'alice@acme': { recipient: [], sender: [t.unapplied_claim!, t.due!] },
    'bob@acme': { recipient: [t.due!], sender: [] },
    'carol@acme': { recipient: [t.unapplied_claim!], sender: [] },
  };
  const created = new Map(docsOf('threads').map((doc) => [doc._id as string, (doc.created_at as Date).getTime()]));
  for (const [handle, key] of Object.entries(keys)) {
    for (const role of ['recipient', 'sender'] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await ok(key, 'tasks/list', {
          filter: { role },
          page: { limit: 5, ...(cursor ? { cursor } : {}) },
        });
        seen.push(...page.items.map((item: any) => item.thread_id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      expect([handle, role, seen]).toEqual([
        handle,
        role,
        [...(after[handle]?.[role] ?? []), ...old.lists[handle]![role].map(([id]) => id)],
      ]);
      const times = seen.map((id) => created.get(id)!);
      expect(times).toEqual([...times].sort((a, b) => b - a));
    }
  }
  const statuses = await ok(keys['bob@acme']!, 'tasks/list', {
    filter: { role: 'recipient', status: ['accepted'] },
    page: { limit: 50 },
  });
  expect(statuses.items.map((item: any) => item.thread_id)).toEqual(
    old.lists['bob@acme']!.recipient.filter(([, status]) => status === 'accepted').map(([id]) => id),
  );
});

test('the old webhook deliveries are in the admin lists as they were, and a dead letter can be re-driven', async () => {
  const admin = relay.adminKey;
  const recorded = docsOf('webhook_deliveries');
  for (const status of ['failed', 'delivered']) {
    const { body } = await relay.rest('GET', `/admin/deliveries?status=${status}&limit=1000`, admin);
    const listed = new Map(body.deliveries.map((d: any) => [d.id, d]));
    const expected = recorded.filter((d) => d.status === status);
    expect(expected.length).toBeGreaterThan(0);
    for (const doc of expected) {
      expect(listed.get(doc._id)).toMatchObject({
        handle: doc.handle,
        thread_id: doc.thread_id,
        event_type: doc.event_type,
      });
      expect((listed.get(doc._id) as any).attempts.map((a: any) => a.outcome)).toEqual(
        doc.attempts.map((a: any) => a.outcome),
      );
    }
  }
  const dead = recorded.find((d) => d.status === 'failed' && d.handle === 'dave@acme')!;
  const redrive = await relay.rest('POST', `/admin/deliveries/${dead._id}/redrive`, admin);
  expect(redrive).toMatchObject({ status: 202, body: { id: dead._id, status: 'pending' } });
  const again = await waitUntil(async () => {
    const { body } = await relay.rest('GET', `/admin/deliveries/${dead._id}`, admin);
    return body.status !== 'pending' ? body : undefined;
  }, 'the re-driven delivery to end');
  expect(again.redrives).toBe(1);
  expect(again.attempts.length).toBeGreaterThan(dead.attempts.length);
});

test('the old webhook endpoints and A2A push config get the new events, signed with the secrets they had', async () => {
  const list = await ok(keys['alice@acme']!, 'ListTaskPushNotificationConfigs', { taskId: recording.push_config.task });
  expect(JSON.stringify(list)).toContain(recording.push_config.id);
  const { message_id: messageId } = await ok(keys['bob@acme']!, 'message/send', {
    task_id: recording.push_config.task,
    message: text('the banner moved'),
  });
  for (const handle of ['alice@acme', 'bob@acme']) {
    const request = await waitUntil(
      async () =>
        hooks.requests.find((r) => r.path === `/${handle.split('@')[0]}` && r.json?.data?.message_id === messageId),
      `${handle}'s webhook of the new message`,
    );
    expect(verifyWebhook(recording.webhook_secrets[handle]!, request)).toMatchObject({
      type: 'thread.message',
      data: { thread_id: recording.push_config.task },
    });
  }
  const push = await waitUntil(
    async () =>
      hooks.requests.find(
        (r) => r.path === '/push' && r.json?.statusUpdate?.metadata?.handoff_event?.message_id === messageId,
      ),
    'the push notification of the new message',
  );
  expect(push.headers['x-a2a-notification-token']).toBe('push-token');
});

test('each teammate’s event feed holds the old events in order and goes on after them', async () => {
  const bob = keys['bob@acme']!;
  const recorded = docsOf('event_log')
    .filter((doc) => doc.handle === 'bob@acme')
    .sort((a, b) => Number(a.seq) - Number(b.seq))
    .map((doc) => doc.event.id as string);
  expect(recorded.length).toBeGreaterThan(20);
  const feed = await relay.rest('GET', '/events?since=0&limit=200', bob);
  expect(feed.status).toBe(200);
  expect(feed.body.events.slice(0, recorded.length).map((e: any) => e.event_id)).toEqual(recorded);
  const id = (
    await ok(keys['alice@acme']!, 'message/send', {
      recipient: 'bob@acme',
      intent: 'inform',
      message: text('after the upgrade'),
    })
  ).task_id;
  const next = await waitUntil(async () => {
    const { body } = await relay.rest('GET', `/events?since=${feed.body.cursor}&limit=200`, bob);
    return body.events.some((e: any) => e.type === 'thread.created' && e.thread_id === id) ? body.events : undefined;
  }, 'the new handoff in bob’s feed');
  expect(Number(next[0].cursor)).toBeGreaterThan(Number(feed.body.cursor));
});

test('the finished run reads back; the running one, whose runner died with the old relay, is taken over by the next claim', async () => {
  const bob = keys['bob@acme']!;
  expect(await ok(bob, 'runs/get', { run_id: recording.runs.finished })).toMatchObject({
    task_id: t.run_finished,
    status: 'succeeded',
    result: { report: 'Regenerated: 14 endpoints, no breaking change' },
  });
  expect(await ok(keys['alice@acme']!, 'runs/get', { run_id: recording.runs.running })).toMatchObject({
    task_id: t.run_running,
    status: 'running',
    claims: 1,
  });
  const { run } = await waitUntil(async () => {
    const claimed = await ok(bob, 'runs/claim', { runner: 'new-laptop', wait_seconds: 1 });
    return claimed.run ? claimed : undefined;
  }, 'the claim of the old running run');
  expect(run).toMatchObject({
    run_id: recording.runs.running,
    status: 'running',
    runner: 'new-laptop',
    claims: 2,
    next_progress_seq: 2,
  });
  await ok(bob, 'runs/finish', {
    run_id: run.run_id,
    lease_id: run.lease_id,
    outcome: 'succeeded',
    exit_code: 0,
    report: 'Settings page migrated',
  });
  expect(await ok(keys['alice@acme']!, 'tasks/get', { task_id: t.run_running })).toMatchObject({ status: 'completed' });
});

test('an old unclaimed handoff is claimed by the first candidate; an old pending one is accepted, talked about and completed', async () => {
  const [alice, bob, carol] = [keys['alice@acme']!, keys['bob@acme']!, keys['carol@acme']!];
  expect(await ok(carol, 'tasks/update', { task_id: t.unclaimed, transition: 'claim' })).toMatchObject({
    status: 'pending',
    claimed_by: 'carol@acme',
  });
  const late = await relay.rpc(bob, 'tasks/update', { task_id: t.unclaimed, transition: 'claim' });
  expect(late.body.error.data.code).toBe('invalid_transition');
  expect(await ok(carol, 'tasks/update', { task_id: t.claimed, transition: 'accept' })).toMatchObject({
    status: 'accepted',
  });

  expect(await ok(bob, 'tasks/update', { task_id: t.pending, transition: 'accept' })).toMatchObject({
    status: 'accepted',
  });
  expect(await ok(bob, 'message/send', { task_id: t.long, message: text('message 27 from bob') })).toMatchObject({
    sequence_no: 27,
  });
  await ok(bob, 'tasks/update', {
    task_id: t.pending,
    transition: 'complete',
    result_summary: 'Fixed the double post',
  });
  expect(await ok(alice, 'tasks/get', { task_id: t.pending })).toMatchObject({
    status: 'completed',
    completed_summary: 'Fixed the double post',
  });
  const done = await ok(bob, 'tasks/list', {
    filter: { role: 'recipient', status: ['completed'] },
    page: { limit: 50 },
  });
  const completed = [
    ...old.lists['bob@acme']!.recipient.filter(([, status]) => status === 'completed').map(([id]) => id),
    t.pending!,
    t.run_running!,
  ];
  const created = (id: string) => threadOf(id).created_at.getTime();
  expect(done.items.map((item: any) => item.thread_id)).toEqual(completed.sort((a, b) => created(b) - created(a)));

  // Every candidate's copy of the old claim card is redrawn in place to say who claimed it.
  const cards = Object.entries(threadOf(t.unclaimed!).slack_claims ?? {});
  expect(cards.map(([user]) => user).sort()).toEqual([U['bob@acme'], U['carol@acme']].sort());
  for (const [user, card] of cards) await redrawn(card.channel, card.ts, `${user}'s claim card redrawn`);
});

test('the open approvals are listed and decided; the held create reaches its recipient and the held accept applies', async () => {
  const lena = keys['lena@acme']!;
  const open = await relay.rest('GET', '/admin/approvals?status=pending', relay.adminKey);
  expect(open.body.approvals.map((a: any) => a.approval_id).sort()).toEqual(Object.values(recording.approvals).sort());

  expect((await relay.rest('POST', `/approvals/${recording.approvals.held_create}/approve`, lena)).status).toBe(200);
  const delivered = await waitUntil(
    async () => (await relay.rpc(keys['dave@acme'], 'tasks/get', { task_id: t.held_create })).body.result,
    'dave to see the approved handoff',
  );
  expect(delivered).toMatchObject({ status: 'pending', summary: 'Held for approval: run the e2e suite on staging' });
  // Lena's old approval DM is redrawn in place, and dave gets the handoff's DM.
  const approverDm = threadOf(t.held_create!).slack_approvals![
    `approval:${recording.approvals.held_create}:${U['lena@acme']}`
  ]!;
  await redrawn(approverDm.channel, approverDm.ts, 'lena’s approval DM redrawn');
  const daveDm = await waitUntil(
    async () => (await relay.store.readThread(t.held_create!))?.slack,
    'dave’s DM of the approved handoff',
  );
  expect(daveDm.channel).toBe(slack.imChannelId(U['dave@acme']!));

  expect((await relay.rest('POST', `/approvals/${recording.approvals.held_accept}/approve`, lena)).status).toBe(200);
  await waitUntil(
    async () => (await ok(keys['alice@acme']!, 'tasks/get', { task_id: t.held_accept })).status === 'accepted',
    'the held accept to apply',
  );
  const pendingNow = await relay.rest('GET', '/admin/approvals?status=pending', relay.adminKey);
  expect(pendingNow.body.approvals.map((a: any) => a.approval_id)).toEqual([recording.approvals.held_timeout]);

  // The policy the old relay was given through its admin API is still in force.
  const { body } = await relay.rpc(keys['alice@acme'], 'message/send', {
    recipient: 'dave@acme',
    intent: 'inform',
    message: text('held again'),
  });
  expect(body.result).toMatchObject({
    status: { state: 'awaiting_approval' },
    approval: { rule_id: 'alice-to-dave-needs-lena', approvers: ['lena@acme'] },
  });
});

test('the reminders that came due while the relay was down fire; a step a day away fires when its time comes', async () => {
  // Both were due at the recording (their minute ran out while the old relay was down); the reminder is a reply under
  // the recipient's DM the old relay posted.
  for (const id of [t.due!, t.unapplied_claim!]) await fired(id, 'remind-1');
  const reminder = await posted(t.due!, 'recipient:t:remind-1');
  expect([reminder.args.channel, reminder.args.thread_ts]).toEqual([
    threadOf(t.due!).slack!.channel,
    threadOf(t.due!).slack!.ts,
  ]);
  const row = (await armedTimerOf(relay.store, t.escalated))!;
  expect(row.step).toBe('remind-2');
  expect(row.due_at.getTime()).toBeGreaterThan(clock.now().getTime() + 23 * 3600_000);
  clock.advance(row.due_at.getTime() - clock.now().getTime() + 1_000);
  const doc = await fired(t.escalated!, 'remind-2');
  // Each step once: the ones that fired under the old relay are still recorded, not fired again.
  expect(Object.keys(doc.timers?.fired ?? {}).sort()).toEqual(['escalate', 'remind-1', 'remind-2']);

  // The approval left open times out at the deadline the old relay gave it: the held create is rejected.
  const alice = keys['alice@acme']!;
  const [approval] = (await ok(alice, 'approvals/get', { approval_id: recording.approvals.held_timeout })).approvals;
  const [recorded] = old.reads.held_timeout!.view.approvals as Array<{ deadline: string }>;
  expect(approval).toMatchObject({ status: 'pending', deadline: movedIso(recorded!.deadline) });
  clock.advance(Date.parse(approval.deadline) - clock.now().getTime() + 1_000);
  await waitUntil(
    async () => (await ok(alice, 'tasks/get', { task_id: t.held_timeout })).status === 'rejected',
    'the old approval to time out',
  );
});

test('Slack: the DM the old relay was posting when it was killed is posted once after the upgrade, beside the sender’s', async () => {
  const doc = await waitUntil(async () => {
    const now = await relay.store.readThread(t.unapplied_claim!);
    return now?.slack && now.slack_sender && Object.keys(now.slack_pending ?? {}).length === 0 ? now : undefined;
  }, 'both DMs of the handoff caught mid-post to be posted and recorded');
  const dms = (user: string) =>
    (slack.messages.get(slack.imChannelId(user)) ?? []).filter(
      (m) =>
        !m.thread_ts &&
        (m.metadata?.event_payload as { thread_id?: string } | undefined)?.thread_id === t.unapplied_claim,
    );
  expect(dms(U['carol@acme']!).map((m) => m.ts)).toEqual([doc.slack!.ts]);
  expect(dms(U['alice@acme']!).map((m) => m.ts)).toEqual([doc.slack_sender!.ts]);
});

test('migrating again changes nothing', async () => {
  const lines: string[] = [];
  expect(await migrateStore(relay.store, (line) => lines.push(line))).toBe(0);
  expect(lines).toEqual([]);
});
