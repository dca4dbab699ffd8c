// Records test/fixtures/layout-2/ (what store-migration-layout2.test.ts starts the current relay on): the relay of
// layout 2 (a checkout of 1017f57) runs as its users run it, on its own embedded FerretDB, and is driven over its own
// API into every state a team's database holds; then it dies mid-write and every collection is dumped as it lies.
//
//   git worktree add /tmp/old-main 1017f57 && (cd /tmp/old-main && npm ci)
//   npm run build && node dist/scripts/record-layout2-fixture.js /tmp/old-main
//
// The old checkout builds its own FerretDB (v1.24.2-handoff-relay.2, another patch set than this checkout's); this
// script gives it GOBIN=/tmp/old-ferretdb-bin (and that folder first on PATH), so the binary this checkout uses is
// neither replaced nor picked. Redis is REDIS_URL's (default 127.0.0.1:6379), under a queue prefix of its own that is
// removed at the end. It takes about six minutes: the timers' shortest steps are a minute.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { BSON, MongoClient, type Document } from 'mongodb';
import { startFakeSlack, type FakeSlack, type FakeSlackHold } from './fake-slack/fake-slack-api';
import { findFreePort } from './local-services/ports';
import { WebhookReceiver, echoChallenge } from './webhook-receiver';

const OLD_CHECKOUT = resolve(process.argv[2] ?? '/tmp/old-main');
const OUT = resolve(process.argv[3] ?? 'test/fixtures/layout-2');
const OLD_GOBIN = process.env.OLD_FERRETDB_BIN ?? '/tmp/old-ferretdb-bin';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DB = 'handoff_relay';
const MINUTE = 60_000;

/**
 * The timer steps the recording ran with; the test runs the new relay with the same ones, since a fired step's next
 * one is computed from them. Every step a minute or more (the least a duration may be), working hours off, so
 * reminders and escalations fire while the recording runs and the rest stay hours or days away.
 */
const TIMER_ENV = {
  RELAY_REMIND_AFTER: '1m',
  RELAY_ESCALATE_AFTER: '2m',
  RELAY_WORKING_HOURS: 'off',
  RELAY_TIMER_SWEEP_INTERVAL: '5s',
};

const SLACK_USERS: Record<string, string> = {
  'lena@acme': 'U0LENA',
  'alice@acme': 'U0ALICE',
  'bob@acme': 'U0BOB',
  'carol@acme': 'U0CAROL',
  'dave@acme': 'U0DAVE',
};

const TEAM = [
  { handle: 'lena@acme', name: 'Lena', role: 'lead' },
  {
    handle: 'alice@acme',
    name: 'Alice',
    role: 'backend',
    skills: ['go', 'sql'],
    repos_owned: ['services/api/'],
    lead: 'lena@acme',
  },
  {
    handle: 'bob@acme',
    name: 'Bob',
    role: 'frontend',
    skills: ['react', 'css'],
    repos_owned: ['apps/web/'],
    lead: 'lena@acme',
  },
  { handle: 'carol@acme', name: 'Carol', role: 'frontend', skills: ['react'], repos_owned: ['apps/admin/'] },
  { handle: 'dave@acme', name: 'Dave', role: 'qa', skills: ['e2e'] },
  // Without Slack: a teammate only agents reach.
  { handle: 'erin@acme', name: 'Erin', role: 'sre', skills: ['terraform'], repos_owned: ['infra/'] },
];

const POLICY = `rules:
  - id: alice-to-dave-needs-lena
    match: { action: handoff.create, sender: { handle: alice@acme }, recipient: { handle: dave@acme } }
    effect: require_approval
    approvers: [lena@acme]
    remind_after: 1m
  - id: infra-accept-needs-the-lead
    match: { action: handoff.accept, intent: propose_action, target_files: { under: [infra/] } }
    effect: require_approval
    approvers: [recipient_lead]
`;

const say = (line: string) => process.stderr.write(`record: ${line}\n`);
const text = (t: string) => ({ role: 'user', parts: [{ type: 'text', text: t }] });

interface OldRelay {
  url: string;
  mongoUrl: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'layout2-record-'));
  const dataDir = join(work, 'data');
  const prefix = `layout2rec_${randomBytes(4).toString('hex')}`;
  const pepper = randomBytes(32).toString('hex');
  const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
  const port = await findFreePort();
  const slack = await startFakeSlack();
  for (const user of Object.values(SLACK_USERS)) slack.addUser(user);
  const hooks = await new WebhookReceiver().start();
  // Dave's receiver takes the challenge and then fails every event: his deliveries end in the dead-letter list.
  hooks.answer = (request) =>
    request.path === '/dave' && request.json?.type !== 'endpoint.challenge'
      ? { status: 500, body: 'down' }
      : echoChallenge(request);
  const signingSecret = randomBytes(16).toString('hex');
  const baseEnv: Record<string, string> = {
    ...pick(process.env, ['HOME', 'USER', 'LANG', 'TMPDIR', 'GOPATH', 'GOMODCACHE', 'GOCACHE', 'GOFLAGS', 'GOPROXY']),
    PATH: `${OLD_GOBIN}:${process.env.PATH ?? ''}`,
    GOBIN: OLD_GOBIN,
    PORT: String(port),
    RELAY_DATA_DIR: dataDir,
    MONGODB_DB: DB,
    REDIS_URL,
    RELAY_QUEUE_PREFIX: prefix,
    RELAY_ADMIN_KEY: adminKey,
    RELAY_KEY_PEPPER: pepper,
    RELAY_DIGEST_AT: 'off',
    RELAY_WEBHOOK_ALLOW_PRIVATE: '1',
    RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
    RELAY_RUN_PROGRESS_INTERVAL: '0ms',
    SLACK_BOT_TOKEN: slack.token,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_API_URL: slack.url,
    LOG_LEVEL: 'info',
  };
  const log = createWriteStream(join(work, 'relay.log'));
  let relay: OldRelay | undefined;
  let ferretPid: number | undefined;
  try {
    // Phase 1: a relay whose handoffs expire after a minute, for one thread that does; then a clean stop.
    relay = await startOld({ ...baseEnv, ...TIMER_ENV, RELAY_REMIND_AFTER: 'off', RELAY_EXPIRE_AFTER: '1m' }, log);
    const api = client(relay.url, adminKey);
    const keys: Record<string, string> = {};
    for (const card of TEAM)
      keys[card.handle] = await api.register({
        ...card,
        ...(SLACK_USERS[card.handle] ? { slack_user_id: SLACK_USERS[card.handle] } : {}),
      });
    const secrets: Record<string, string> = {};
    for (const handle of ['alice@acme', 'bob@acme', 'dave@acme']) {
      const put = await api.rest('PUT', '/agents/me/card', keys[handle], {
        notification_url: hooks.url(`/${handle.split('@')[0]}`),
      });
      secrets[handle] = put.notification_secret;
    }
    for (const handle of Object.keys(secrets))
      await until(
        async () => (await api.rest('GET', '/agents/me', keys[handle])).notification?.verified === true,
        `${handle}'s endpoint verified`,
      );
    await api.rest('PUT', '/admin/policy', adminKey, { source: POLICY });
    const [alice, bob, carol, lena] = ['alice@acme', 'bob@acme', 'carol@acme', 'lena@acme'].map((h) => keys[h]!);
    const t: Record<string, string> = {};
    t.expired = await api.send(alice, {
      recipient: 'bob@acme',
      intent: 'inform',
      message: text('Expired: nobody acted on the release notes in time'),
    });
    await until(
      async () => (await api.ok(alice, 'tasks/get', { task_id: t.expired })).status === 'expired',
      'the expiry',
      3 * MINUTE,
    );
    relay.child.kill('SIGTERM');
    await relay.exited;

    // Phase 2: the team's usual schedule (reminders after a minute, escalation after two, the rest days away).
    relay = await startOld({ ...baseEnv, ...TIMER_ENV }, log);
    const old = client(relay.url, adminKey);
    const artifacts = [
      {
        type: 'file_diff',
        path: 'apps/web/src/Login.tsx',
        diff: '--- a/apps/web/src/Login.tsx\n+++ b/apps/web/src/Login.tsx\n@@ -1 +1 @@\n-old\n+new\n',
      },
      { type: 'file_ref', path: 'services/api/auth.go', git_sha: 'a1b2c3d', lines: [10, 20] },
      { type: 'test_command', command: 'npm test -- login', cwd: 'apps/web' },
      { type: 'api_contract', inline: { openapi: '3.1.0', paths: { '/login': { post: { summary: 'log in' } } } } },
      { type: 'link', url: 'https://example.com/design/login', title: 'Login design' },
      { type: 'screenshot', url: 'https://example.com/shot.png', note: 'kept as data' },
    ];
    // Under a client idempotency key: a client that asks again after the upgrade must get this thread back.
    const idempotentCreate = {
      recipient: 'bob@acme',
      intent: 'inform',
      message: text('Pending: the login form posts twice'),
      artifacts,
      metadata: { ticket: 'WEB-101', client_idempotency_key: 'web-101-login' },
    };
    t.pending = await old.send(alice, idempotentCreate);
    t.escalated = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'ask_question',
      message: text('Escalated: which date format does the admin export use?'),
      metadata: { question: 'ISO or locale?' },
    });
    t.accepted = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'inform',
      message: text('Accepted: move the banner to the header'),
    });
    await old.ok(bob, 'tasks/update', { task_id: t.accepted, transition: 'accept' });
    const push = await old.ok(alice, 'CreateTaskPushNotificationConfig', {
      taskId: t.accepted,
      id: 'alice-push',
      url: hooks.url('/push'),
      token: 'push-token',
    });
    t.declined = await old.send(alice, {
      recipient: 'carol@acme',
      intent: 'inform',
      message: text('Declined: rename the admin routes'),
    });
    await old.ok(carol, 'tasks/update', {
      task_id: t.declined,
      transition: 'decline',
      reason: 'Not mine: the routes are bob’s',
    });
    t.completed = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'inform',
      message: text('Completed: bump the date library'),
    });
    await old.ok(bob, 'tasks/update', { task_id: t.completed, transition: 'accept' });
    await old.ok(bob, 'message/send', { task_id: t.completed, message: text('On it, the bump touches three files') });
    await old.ok(bob, 'tasks/update', {
      task_id: t.completed,
      transition: 'complete',
      result_summary: 'Bumped to 4.1, tests green',
      artifacts: [{ type: 'link', url: 'https://example.com/pr/7', title: 'PR 7' }],
    });
    t.cancelled = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'inform',
      message: text('Cancelled: the color tokens'),
    });
    await old.ok(alice, 'tasks/cancel', { task_id: t.cancelled, reason: 'Design changed its mind' });
    const held = await old.rpc(alice, 'message/send', {
      recipient: 'dave@acme',
      intent: 'inform',
      message: text('Held for approval: run the e2e suite on staging'),
    });
    t.held_create = held.result.task_id;
    const heldApproval = held.result.approval.approval_id as string;
    const timingOut = await old.rpc(alice, 'message/send', {
      recipient: 'dave@acme',
      intent: 'inform',
      message: text('Held until it times out: rotate the staging keys'),
    });
    t.held_timeout = timingOut.result.task_id;
    const rejected = await old.rpc(alice, 'message/send', {
      recipient: 'dave@acme',
      intent: 'inform',
      message: text('Rejected: load-test production'),
    });
    t.rejected = rejected.result.task_id;
    await old.rest('POST', `/approvals/${rejected.result.approval.approval_id}/reject`, lena, {
      reason: 'Not on production',
    });
    const approved = await old.rpc(alice, 'message/send', {
      recipient: 'dave@acme',
      intent: 'inform',
      message: text('Approved: smoke-test the new checkout'),
    });
    t.approved = approved.result.task_id;
    await old.rest('POST', `/approvals/${approved.result.approval.approval_id}/approve`, lena);
    t.held_accept = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'propose_action',
      message: text('Held accept: raise the web tier’s memory'),
      proposed_action: {
        description: 'Raise the memory limit',
        target_files: ['infra/web.tf'],
        rationale: 'OOM kills at peak',
        suggested_diff: '-memory = 512\n+memory = 1024\n',
      },
    });
    const heldAccept = await old.rpc(bob, 'tasks/update', { task_id: t.held_accept, transition: 'accept' });
    const heldAcceptApproval = heldAccept.error?.data?.details?.approval_id as string;
    if (heldAccept.error?.data?.code !== 'approval_pending')
      throw new Error(`the accept was not held: ${JSON.stringify(heldAccept)}`);
    t.unclaimed = await old.send(alice, {
      recipient: 'role:frontend',
      intent: 'inform',
      message: text('Unclaimed: someone on frontend, fix the focus ring'),
    });
    t.claimed = await old.send(alice, {
      recipient: 'skill:react',
      intent: 'inform',
      message: text('Claimed: a react hook leaks a listener'),
    });
    await old.ok(carol, 'tasks/update', { task_id: t.claimed, transition: 'claim' });
    t.to_dave = await old.send(bob, {
      recipient: 'dave@acme',
      intent: 'inform',
      message: text('For dave: the checkout flakes on Safari'),
    });
    t.long = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'ask_question',
      message: text('Long: pair on the cache invalidation'),
      metadata: { question: 'Which keys go stale?' },
    });
    await old.ok(bob, 'tasks/update', { task_id: t.long, transition: 'accept' });
    for (let i = 1; i <= 26; i += 1) {
      const [from, who] = i % 2 === 1 ? [bob, 'bob'] : [alice, 'alice'];
      const extra =
        i % 7 === 0
          ? { artifacts: [{ type: 'file_ref', path: `services/api/cache_${i}.go`, lines: `${i}-${i + 5}` }] }
          : {};
      await old.ok(from, 'message/send', { task_id: t.long, message: text(`message ${i} from ${who}`), ...extra });
    }
    t.chat = await old.send(alice, {
      recipient: 'carol@acme',
      intent: 'inform',
      message: text('Chat: the admin table paginates wrong'),
    });
    for (let i = 1; i <= 5; i += 1)
      await old.ok(i % 2 ? carol : alice, 'message/send', {
        task_id: t.chat,
        message: text(`chat ${i}`),
        ...(i === 3 ? { payload: { step: i, tags: ['a', 'b'] } } : {}),
      });
    t.run_finished = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'inform',
      message: text('Run finished: regenerate the API client'),
    });
    const runFinished = (
      await old.ok(bob, 'tasks/update', { task_id: t.run_finished, transition: 'accept', run: true })
    ).run.run_id as string;
    const first = await claimRun(old, bob, runFinished);
    await old.ok(bob, 'runs/progress', {
      run_id: runFinished,
      lease_id: first.lease_id,
      seq: 1,
      text: 'generating\nwriting client.ts',
    });
    await old.ok(bob, 'runs/finish', {
      run_id: runFinished,
      lease_id: first.lease_id,
      outcome: 'succeeded',
      exit_code: 0,
      report: 'Regenerated: 14 endpoints, no breaking change',
    });
    t.run_running = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'inform',
      message: text('Run running: migrate the settings page'),
    });
    const runRunning = (await old.ok(bob, 'tasks/update', { task_id: t.run_running, transition: 'accept', run: true }))
      .run.run_id as string;
    const second = await claimRun(old, bob, runRunning);
    await old.ok(bob, 'runs/progress', {
      run_id: runRunning,
      lease_id: second.lease_id,
      seq: 1,
      text: 'reading the settings page',
    });
    await old.ok(bob, 'runs/heartbeat', { run_id: runRunning, lease_id: second.lease_id });

    // Everything settles: every step due within the hour has fired, the queues and the outbox are empty.
    const mongo = await MongoClient.connect(relay.mongoUrl);
    const db = mongo.db(DB);
    await until(
      async () => {
        const soon = await db
          .collection('timers')
          .countDocuments({ due_at: { $lt: new Date(Date.now() + 60 * MINUTE) } });
        return (
          soon === 0 && (await db.collection('outbox_entries').countDocuments({})) === 0 && (await queuesIdle(prefix))
        );
      },
      'the timers due within the hour to fire and the queues to drain',
      6 * MINUTE,
    );
    await mongo.close();

    // What the old relay answers for every thread and list: the test expects the same from the new one.
    const reads: Record<string, { readers: Record<string, string>; view: unknown }> = {};
    for (const [label, id] of Object.entries(t)) {
      const readers: Record<string, string> = {};
      let view: unknown;
      for (const [handle, key] of Object.entries(keys)) {
        const answer = await old.rpc(key, 'tasks/get', { task_id: id });
        readers[handle] = answer.result ? 'ok' : answer.error.data.code;
        view ??= answer.result;
      }
      reads[label] = { readers, view };
    }
    const lists: Record<string, { recipient: Array<[string, string]>; sender: Array<[string, string]> }> = {};
    for (const [handle, key] of Object.entries(keys)) {
      const walk = async (role: string) => {
        const items: Array<[string, string]> = [];
        let cursor: string | undefined;
        do {
          const page = await old.ok(key, 'tasks/list', {
            filter: { role },
            page: { limit: 5, ...(cursor ? { cursor } : {}) },
          });
          items.push(...page.items.map((item: any) => [item.thread_id, item.status] as [string, string]));
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        return items;
      };
      lists[handle] = { recipient: await walk('recipient'), sender: await walk('sender') };
    }

    // Last, the two threads the upgrade catches mid-flight: one whose first reminder comes due while the relay is down,
    // and one whose Slack post was claimed (a claim in thread_writes, applied with the post's record) when the relay
    // died: Slack holds the post, and the relay is killed before it answers.
    t.due = await old.send(alice, {
      recipient: 'bob@acme',
      intent: 'ask_question',
      message: text('Due: is the CDN purge automatic?'),
      metadata: { question: 'Manual or automatic?' },
    });
    const dueCreated = Date.now();
    const hold: FakeSlackHold = slack.holdNext('chat.postMessage', (args) =>
      JSON.stringify(args).includes('Unapplied claim'),
    );
    t.unapplied_claim = await old.send(alice, {
      recipient: 'carol@acme',
      intent: 'inform',
      message: text('Unapplied claim: the admin logo is blurry'),
    });
    await hold.arrived;
    await until(async () => (await queueCounts(prefix, ['webhooks'])) === 0, 'the last webhooks', MINUTE);
    const pidFile = JSON.parse(await readFile(join(dataDir, 'ferretdb', 'ferretdb.pid'), 'utf8')) as { pid: number };
    ferretPid = pidFile.pid;
    relay.child.kill('SIGKILL');
    await relay.exited;
    const stoppedAt = new Date();
    // The relay stays down until both threads' first reminders are due.
    await sleep(Math.max(0, dueCreated + MINUTE + 10_000 - Date.now()));

    const recordedAt = new Date();
    const dumped = await dump(relay.mongoUrl, join(OUT, 'db'));
    await writeJson(join(OUT, 'recording.json'), {
      about:
        'The database a layout-2 relay (1017f57) left, recorded by scripts/record-layout2-fixture.ts; see README.md.',
      recorded_at: recordedAt.toISOString(),
      stopped_at: stoppedAt.toISOString(),
      key_pepper: pepper,
      keys,
      webhook_secrets: secrets,
      env: TIMER_ENV,
      threads: t,
      approvals: {
        held_create: heldApproval,
        held_accept: heldAcceptApproval,
        held_timeout: timingOut.result.approval.approval_id,
      },
      idempotent_create: idempotentCreate,
      runs: { finished: runFinished, running: runRunning },
      push_config: { task: t.accepted, id: push.id },
      collections: dumped,
    });
    await writeJson(join(OUT, 'old-answers.json'), { reads, lists });
    await writeJson(join(OUT, 'slack.json'), slackWorkspace(slack));
    say(
      `wrote ${OUT}: ${Object.entries(dumped)
        .map(([name, c]) => `${name} ${c.documents}`)
        .join(', ')}`,
    );
  } finally {
    if (relay && relay.child.exitCode === null && relay.child.signalCode === null) relay.child.kill('SIGKILL');
    if (ferretPid) await stopPid(ferretPid);
    await removeKeys(prefix);
    await hooks.stop();
    await slack.close();
    log.end();
    if (!process.env.KEEP_RECORDING_DIR) await rm(work, { recursive: true, force: true });
    else say(`kept ${work}`);
  }
}

/** `handoff-relay start` of the old checkout, as `npm start` runs it; resolves once it listens. */
async function startOld(env: Record<string, string>, log: NodeJS.WritableStream): Promise<OldRelay> {
  const child = spawn(join(OLD_CHECKOUT, 'dist', 'scripts', 'cli.js'), ['start'], {
    cwd: OLD_CHECKOUT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log, { end: false });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let mongoUrl = '';
  let lines = '';
  const listening = new Promise<string>((resolveUrl, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      lines += chunk.toString('utf8');
      mongoUrl ||= /FerretDB \(SQLite under .*\) on (mongodb:\/\/\S+)/.exec(lines)?.[1] ?? '';
      const url = /listening on (http:\/\/\S+)/.exec(lines)?.[1];
      if (url) resolveUrl(url);
    });
    void exited.then((code) => reject(new Error(`the old relay exited (${code}) before listening:\n${lines}`)));
  });
  const url = await listening;
  say(`old relay on ${url}, its FerretDB on ${mongoUrl}`);
  return { url, mongoUrl, child, exited };
}

function client(url: string, adminKey: string) {
  async function call(method: string, path: string, key: string | undefined, body?: unknown): Promise<any> {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as any;
    if (path !== '/a2a' && response.status >= 300)
      throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  }
  const rpc = (key: string, method: string, params: unknown) =>
    call('POST', '/a2a', key, { jsonrpc: '2.0', id: 1, method, params });
  const ok = async (key: string, method: string, params: unknown) => {
    const answer = await rpc(key, method, params);
    if (!answer.result) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  };
  return {
    rest: call,
    rpc,
    ok,
    send: async (key: string, params: Record<string, unknown>) =>
      (await ok(key, 'message/send', params)).task_id as string,
    register: async (card: Record<string, unknown>) =>
      (await call('POST', '/admin/agents', adminKey, card)).api_key as string,
  };
}

/** The runner's claim of `runId` (runs/claim hands out the oldest queued run, and there is only this one). */
async function claimRun(api: ReturnType<typeof client>, key: string, runId: string): Promise<{ lease_id: string }> {
  return until(async () => {
    const { run } = await api.ok(key, 'runs/claim', { runner: 'bob-laptop', wait_seconds: 2 });
    if (run && run.run_id !== runId) throw new Error(`claimed ${run.run_id}, not ${runId}`);
    return run ?? undefined;
  }, `the claim of run ${runId}`);
}

async function queueCounts(prefix: string, names: string[]): Promise<number> {
  let total = 0;
  for (const name of names) {
    const queue = new Queue(name, { connection: { url: REDIS_URL }, prefix });
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    await queue.close();
    total += Object.values(counts).reduce((a, b) => a + b, 0);
  }
  return total;
}

/** Nothing waiting or running on the delivery queues; `verify` keeps its timers' delayed jobs, only none may run. */
async function queuesIdle(prefix: string): Promise<boolean> {
  if ((await queueCounts(prefix, ['slack', 'slack-sync', 'webhooks'])) > 0) return false;
  const verify = new Queue('verify', { connection: { url: REDIS_URL }, prefix });
  const counts = await verify.getJobCounts('waiting', 'active', 'prioritized');
  await verify.close();
  return Object.values(counts).every((n) => n === 0);
}

/**
 * What the team's Slack holds at the end (the held post never reached it), without the blocks: the new relay updates
 * and replies under these messages by their ts and reads them back only for their metadata.
 */
function slackWorkspace(slack: FakeSlack): Record<string, unknown> {
  const messages = Object.fromEntries(
    [...slack.messages].map(([channel, list]) => [
      channel,
      list.map(({ ts, thread_ts, text, metadata }) => ({
        ts,
        ...(thread_ts ? { thread_ts } : {}),
        text,
        ...(metadata ? { metadata } : {}),
      })),
    ]),
  );
  return { users: SLACK_USERS, messages };
}

/** Every collection, sorted by `_id`, one canonical Extended JSON document a line; returns the counts. */
async function dump(mongoUrl: string, dir: string): Promise<Record<string, { documents: number; indexes: unknown[] }>> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const mongo = await MongoClient.connect(mongoUrl);
  try {
    const db = mongo.db(DB);
    const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
    const summary: Record<string, { documents: number; indexes: unknown[] }> = {};
    for (const name of names) {
      let docs = await db.collection(name).find({}).sort({ _id: 1 }).toArray();
      if (name === 'thread_writes') docs = newestClaims(docs);
      const lines = docs.map((doc) => BSON.EJSON.stringify(doc, { relaxed: false }));
      await writeFile(join(dir, `${name}.json`), `[\n${lines.join(',\n')}\n]\n`);
      const indexes = (await db.collection(name).listIndexes().toArray())
        .filter((index) => index.name !== '_id_')
        .map(({ key, name: indexName, unique }) => ({ key, name: indexName, ...(unique ? { unique } : {}) }));
      summary[name] = { documents: docs.length, indexes };
    }
    let bytes = 0;
    for (const file of await readdir(dir)) bytes += (await stat(join(dir, file))).size;
    say(`dumped ${names.length} collections, ${bytes.toLocaleString('en')} bytes`);
    return summary;
  } finally {
    await mongo.close();
  }
}

/**
 * Each thread's newest claim only: every write of a thread left one (the 26-message thread alone 136 of 8 KiB), 1.9 MB
 * in all, and the old relay's own clean-up deletes them after an hour. The newest is the one that matters: the
 * unapplied claim, or one the document already holds.
 */
function newestClaims<T extends Document>(claims: T[]): T[] {
  const newest = new Map<string, T>();
  for (const claim of claims) {
    const held = newest.get(claim.thread_id);
    if (!held || held.version < claim.version) newest.set(claim.thread_id, claim);
  }
  return claims.filter((claim) => newest.get(claim.thread_id) === claim);
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await mkdir(resolve(file, '..'), { recursive: true });
  await writeFile(file, `${JSON.stringify(value, null, 1)}\n`);
}

async function until<T>(
  check: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** The FerretDB the killed relay left running (its pid file names it): stopped as the next start would stop it. */
async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  await until(
    async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    },
    `FerretDB (pid ${pid}) to stop`,
    10_000,
  ).catch(() => process.kill(pid, 'SIGKILL'));
}

async function removeKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (found.length) await redis.unlink(...found);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => env[n] !== undefined).map((n) => [n, env[n]!]));
}

main().catch((error: unknown) => {
  process.stderr.write(`record: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
