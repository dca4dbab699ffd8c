// The rest of the wire contract on a real relay: appends, pagination, unread counts, cancel, idempotent
// transitions, teammates REST, blocks, key rotation, disabling, public card privacy and rate limits.
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { uniqueName } from '../helpers/test-env';
import { sendHandoff, text } from '../helpers/handoffs';
import { queuePrefix } from '../helpers/queue-keys';

let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;

const handoff = (key: string, to = 'bob@acme', extra: Record<string, unknown> = {}) =>
  sendHandoff(relay, key, to, 'work', extra);
const rest = (...args: Parameters<TestRelay['rest']>) => relay.rest(...args);

beforeAll(async () => {
  relay = await startTestRelay({ name: 'core_depth' });
  alice = await relay.register({
    handle: 'alice@acme',
    name: 'Alice',
    role: 'backend',
    repos_owned: ['services/api/', 'docs/'],
  });
  bob = await relay.register({
    handle: 'bob@acme',
    name: 'Bob',
    role: 'frontend',
    repos_owned: ['apps/web/src/', 'apps/mobile/'],
  });
  carol = await relay.register({ handle: 'carol@acme', name: 'Carol', role: 'qa' });
});

afterAll(async () => {
  await relay?.stop();
});

describe('messages in a thread', () => {
  test('both participants append; sequence numbers are contiguous even under 20 concurrent appends', async () => {
    const id = await handoff(alice);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        relay.rpc(i % 2 ? alice : bob, 'message/send', { task_id: id, message: text(`m${i}`) }),
      ),
    );
    // Every append succeeds (a failure shows its error here: one full run on a loaded box lost 11 of 20).
    expect(answers.filter((a) => a.body.error).map((a) => a.body.error)).toEqual([]);
    const seqs = answers.map((a) => a.body.result?.sequence_no).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const thread = (await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result;
    expect(thread.messages.map((m: any) => m.sequence_no)).toEqual(seqs);
    expect(new Set(thread.messages.map((m: any) => m.body)).size).toBe(20);
    expect(await relay.store.messages.countDocuments({ thread_id: id })).toBe(20);
  });

  test('an append answers its id and number, carries artifacts and payload, and is idempotent', async () => {
    const id = await handoff(alice);
    const params = {
      task_id: id,
      message: text('Answer: cursors'),
      payload: { answer: 'cursor' },
      artifacts: [{ type: 'link', url: 'https://e.com/x' }],
      metadata: { client_idempotency_key: 'reply-1' },
    };
    const first = await relay.rpc(bob, 'message/send', params);
    expect(first.body.result).toEqual({
      thread_id: id,
      message_id: expect.any(String),
      sequence_no: 1,
      created_at: expect.any(String),
    });
    const again = await Promise.all([1, 2, 3].map(() => relay.rpc(bob, 'message/send', params)));
    for (const a of again) expect(a.body.result).toEqual(first.body.result);
    const changed = await relay.rpc(bob, 'message/send', { ...params, message: text('another answer') });
    expect(changed.body.error.code).toBe(-32011);
    const thread = (await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result;
    expect(thread.messages).toEqual([
      {
        id: first.body.result.message_id,
        sequence_no: 1,
        from: 'bob@acme',
        body: 'Answer: cursors',
        payload: { answer: 'cursor' },
        artifacts: [{ type: 'link', url: 'https://e.com/x' }],
        via: 'a2a',
        created_at: first.body.result.created_at,
      },
    ]);
    const doc = await relay.store.threads.findOne({ _id: id });
    expect(doc!.outbox.filter((e) => e.type === 'thread.message')).toHaveLength(1);
  });

  test('a keyed append whose relay died after the write, before it recorded the outcome, is one message when retried', async () => {
    const id = await handoff(alice);
    const params = {
      task_id: id,
      message: text('progress: tests pass'),
      metadata: { client_idempotency_key: 'died-after-write' },
    };
    const first = (await relay.rpc(bob, 'message/send', params)).body.result;
    expect(first.sequence_no).toBe(1);
    // What a process killed between the thread write and the ledger's outcome leaves: the key's record still
    // running, older than the ledger's wait for a live owner, so a retry takes the key over.
    const record = await relay.store.idempotency.findOne({ 'result.message_id': first.message_id });
    expect(record?.state).toBe('done');
    await relay.store.idempotency.updateOne(
      { _id: record!._id },
      { $set: { state: 'running', created_at: new Date(Date.now() - 60_000) }, $unset: { result: '' } },
    );
    const retried = (await relay.rpc(bob, 'message/send', params)).body;
    expect(retried.result).toEqual(first);
    const thread = (await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result;
    expect(thread.messages.map((m: any) => m.body)).toEqual(['progress: tests pass']);
    expect(
      (await relay.store.threads.findOne({ _id: id }))!.outbox.filter((e) => e.type === 'thread.message'),
    ).toHaveLength(1);
  });

  test('only participants append, and not once the thread is finished', async () => {
    const id = await handoff(alice);
    expect((await relay.rpc(carol, 'message/send', { task_id: id, message: text('hi') })).body.error.code).toBe(-32005);
    await relay.rpc(alice, 'tasks/cancel', { task_id: id });
    expect((await relay.rpc(bob, 'message/send', { task_id: id, message: text('late') })).body.error).toMatchObject({
      code: -32007,
      data: { code: 'thread_terminal' },
    });
    expect(await relay.store.messages.countDocuments({ thread_id: id })).toBe(0);
  });
});

describe('tasks/list', () => {
  let store: TestRelay;
  let dora: string;
  let erin: string;
  const created: string[] = [];

  beforeAll(async () => {
    store = relay;
    dora = await relay.register({ handle: 'dora@acme' });
    erin = await relay.register({ handle: 'erin@acme' });
    for (let i = 0; i < 45; i += 1)
      created.push(await handoff(dora, 'erin@acme', { message: text(`handoff ${i} ${'x'.repeat(300)}`) }));
    await relay.rpc(erin, 'tasks/update', { task_id: created[3], transition: 'accept' });
    await relay.rpc(erin, 'tasks/update', { task_id: created[4], transition: 'decline', reason: 'not mine' });
  });

  test('walking every page returns every thread exactly once, newest first', async () => {
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const answer: any = (
        await relay.rpc(erin, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 10, cursor } })
      ).body.result;
      expect(answer.items.length).toBeLessThanOrEqual(10);
      seen.push(...answer.items);
      cursor = answer.next_cursor;
    } while (cursor);
    expect(seen.map((i) => i.thread_id)).toEqual([...created].reverse());
    expect(seen[0]).toEqual({
      thread_id: created[44],
      sender: { handle: 'dora@acme', name: 'dora', role: 'engineer' },
      recipient: { handle: 'erin@acme', name: 'erin', role: 'engineer' },
      summary_preview: expect.stringMatching(/^handoff 44 x+…$/),
      intent: 'inform',
      status: 'pending',
      unread_messages: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(seen[0].summary_preview).toHaveLength(200);
    void store;
  });

  test('filters by status and by role', async () => {
    const accepted = (
      await relay.rpc(erin, 'tasks/list', { filter: { role: 'recipient', status: ['accepted', 'declined'] } })
    ).body.result;
    expect(accepted.items.map((i: any) => i.thread_id)).toEqual([created[4], created[3]]);
    expect(accepted.next_cursor).toBeNull();
    const sent = (await relay.rpc(dora, 'tasks/list', { filter: { role: 'sender', status: ['declined'] } })).body
      .result;
    expect(sent.items.map((i: any) => [i.thread_id, i.status])).toEqual([[created[4], 'declined']]);
    expect((await relay.rpc(dora, 'tasks/list', { filter: { role: 'recipient' } })).body.result.items).toEqual([]);
  });

  test('unread_messages counts the other side’s messages since the caller last read the thread', async () => {
    const id = created[10];
    for (const t of ['q1', 'q2', 'q3']) await relay.rpc(dora, 'message/send', { task_id: id, message: text(t) });
    await relay.rpc(erin, 'message/send', { task_id: id, message: text('my own') });
    const unread = async () =>
      (
        await relay.rpc(erin, 'tasks/list', {
          filter: { role: 'recipient', since: new Date(0).toISOString() },
          page: { limit: 100 },
        })
      ).body.result.items.find((i: any) => i.thread_id === id).unread_messages;
    expect(await unread()).toBe(3);
    await relay.rpc(erin, 'tasks/get', { task_id: id });
    expect(await unread()).toBe(0);
    await relay.rpc(dora, 'message/send', { task_id: id, message: text('q4') });
    expect(await unread()).toBe(1);
  });

  test('a cursor this relay did not issue is invalid_params', async () => {
    const { body } = await relay.rpc(erin, 'tasks/list', { page: { cursor: 'bm90LWEtY3Vyc29y' } });
    expect(body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^params\.page\.cursor/) });
  });
});

describe('transitions', () => {
  test('decline keeps its reason; cancel is for the sender only and ends the thread', async () => {
    const declined = await handoff(alice);
    const decline = await relay.rpc(bob, 'tasks/update', {
      task_id: declined,
      transition: 'decline',
      reason: 'Out of scope',
    });
    expect(decline.body.result).toEqual({ thread_id: declined, status: 'declined', declined_at: expect.any(String) });
    expect((await relay.rpc(alice, 'tasks/get', { task_id: declined })).body.result.decline_reason).toBe(
      'Out of scope',
    );

    const id = await handoff(alice);
    expect((await relay.rpc(bob, 'tasks/cancel', { task_id: id })).body.error).toMatchObject({ code: -32009 });
    await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'accept' });
    const cancel = await relay.rpc(alice, 'tasks/cancel', { task_id: id, reason: 'done elsewhere' });
    expect(cancel.body.result).toEqual({ thread_id: id, status: 'cancelled', cancelled_at: expect.any(String) });
    // Cancelling again is answered with the current state and adds nothing to the history.
    expect((await relay.rpc(alice, 'tasks/cancel', { task_id: id })).body.result).toEqual(cancel.body.result);
    const history = (await relay.rpc(bob, 'tasks/get', { task_id: id })).body.result.status_history;
    expect(history.map((h: any) => [h.status, h.by])).toEqual([
      ['pending', 'alice@acme'],
      ['accepted', 'bob@acme'],
      ['cancelled', 'alice@acme'],
    ]);
  });

  test('the same accept with one idempotency key, 10 times at once, answers the original result every time', async () => {
    const id = await handoff(alice);
    const params = { task_id: id, transition: 'accept', metadata: { client_idempotency_key: 'accept-once' } };
    const answers = await Promise.all(Array.from({ length: 10 }, () => relay.rpc(bob, 'tasks/update', params)));
    const results = answers.map((a) => a.body.result);
    expect(results.every((r) => r && r.status === 'accepted' && r.accepted_at === results[0].accepted_at)).toBe(true);
    const header = await relay.rpc(
      bob,
      'tasks/update',
      { task_id: id, transition: 'accept' },
      { 'Idempotency-Key': 'accept-once' },
    );
    expect(header.body.result).toEqual(results[0]);
    const other = await relay.rpc(bob, 'tasks/update', {
      task_id: id,
      transition: 'complete',
      metadata: { client_idempotency_key: 'accept-once' },
    });
    expect(other.body.error.code).toBe(-32011);
    const cancelKey = await relay.rpc(alice, 'tasks/cancel', {
      task_id: id,
      metadata: { client_idempotency_key: 'c1' },
    });
    const cancelAgain = await relay.rpc(alice, 'tasks/cancel', {
      task_id: id,
      metadata: { client_idempotency_key: 'c1' },
    });
    expect(cancelAgain.body.result).toEqual(cancelKey.body.result);
    const doc = await relay.store.threads.findOne({ _id: id });
    expect(doc!.status_history.map((h) => h.status)).toEqual(['pending', 'accepted', 'cancelled']);
  });
});

describe('teammates', () => {
  test('agents/list matches a repo exactly, or below it when the filter ends in /', async () => {
    const list = async (repo: string) =>
      (await relay.rpc(carol, 'agents/list', { repo })).body.result.teammates.map((t: any) => t.handle);
    expect(await list('apps/web/src/')).toEqual(['bob@acme']);
    expect(await list('apps/')).toEqual(['bob@acme']);
    expect(await list('apps')).toEqual([]);
    expect(await list('services/api/')).toEqual(['alice@acme']);
    expect(await list('apps/web/')).toEqual(['bob@acme']);
    expect(await list('a.ps/')).toEqual([]); // regex characters are literal
  });

  test('agents/list combines role, skill and repo, lists each teammate once, by handle', async () => {
    await relay.register({
      handle: 'zed@acme',
      name: 'Zed',
      role: 'frontend',
      skills: ['react', 'css'],
      repos_owned: ['apps/admin/', 'apps/web/src/'],
    });
    await relay.register({
      handle: 'abe@acme',
      name: 'Abe',
      role: 'backend',
      skills: ['react'],
      repos_owned: ['apps/web/src/'],
    });
    const list = async (params: Record<string, string>) =>
      (await relay.rpc(carol, 'agents/list', params)).body.result.teammates.map((t: any) => t.handle);
    expect(await list({ repo: 'apps/' })).toEqual(['abe@acme', 'bob@acme', 'zed@acme']);
    expect(await list({ repo: 'apps/web/src/' })).toEqual(['abe@acme', 'bob@acme', 'zed@acme']);
    expect(await list({ repo: 'apps/', role: 'frontend' })).toEqual(['bob@acme', 'zed@acme']);
    expect(await list({ skill: 'react' })).toEqual(['abe@acme', 'zed@acme']);
    expect(await list({ skill: 'react', role: 'frontend', repo: 'apps/admin/' })).toEqual(['zed@acme']);
    expect(await list({ skill: 'css', repo: 'services/' })).toEqual([]);
  });

  test('a card update returns the webhook secret once; no later read shows it', async () => {
    const frank = await relay.register({ handle: 'frank@acme', name: 'Frank' });
    const put = await rest('PUT', '/agents/me/card', frank, {
      role: 'mobile',
      skills: ['swift'],
      tools: ['xcodebuild'],
      notification_url: 'https://hooks.example.com/frank',
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      handle: 'frank@acme',
      role: 'mobile',
      skills: ['swift'],
      tools: ['xcodebuild'],
      notification: { url: 'https://hooks.example.com/frank', verified: false },
    });
    expect(put.body.notification_secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const me = await rest('GET', '/agents/me', frank);
    expect(me.body.notification).toEqual({ url: 'https://hooks.example.com/frank', verified: false });
    expect(JSON.stringify(me.body)).not.toContain(put.body.notification_secret);
    const same = await rest('PUT', '/agents/me/card', frank, { notification_url: 'https://hooks.example.com/frank' });
    expect(same.body.notification_secret).toBeUndefined();
    const mobile = (await relay.rpc(carol, 'agents/list', { role: 'mobile' })).body.result.teammates;
    expect(mobile).toEqual([
      { handle: 'frank@acme', name: 'Frank', role: 'mobile', skills: ['swift'], repos_owned: [] },
    ]);
  });

  test('a block stops new handoffs and messages in both directions until it is lifted', async () => {
    const id = await handoff(alice, 'carol@acme');
    const blocked = await rest('POST', '/agents/me/block', carol, { handle: 'alice@acme' });
    expect(blocked.body).toEqual({ blocked: ['alice@acme'] });
    expect((await rest('GET', '/agents/me/block', carol)).body).toEqual({ blocked: ['alice@acme'] });
    const before = await relay.store.threads.countDocuments();
    const toCarol = await relay.rpc(alice, 'message/send', {
      recipient: 'carol@acme',
      intent: 'inform',
      message: text('x'),
    });
    expect(toCarol.body.error).toMatchObject({ code: -32013, data: { code: 'teammate_blocked' } });
    const toAlice = await relay.rpc(carol, 'message/send', {
      recipient: 'alice@acme',
      intent: 'inform',
      message: text('x'),
    });
    expect(toAlice.body.error.code).toBe(-32013);
    expect((await relay.rpc(alice, 'message/send', { task_id: id, message: text('x') })).body.error.code).toBe(-32013);
    expect((await relay.rpc(carol, 'message/send', { task_id: id, message: text('x') })).body.error.code).toBe(-32013);
    expect(await relay.store.threads.countDocuments()).toBe(before);
    expect((await rest('DELETE', '/agents/me/block/alice@acme', carol)).body).toEqual({ blocked: [] });
    expect((await relay.rpc(alice, 'message/send', { task_id: id, message: text('x') })).body.result.sequence_no).toBe(
      1,
    );
  });

  test('rotating a key revokes the old one at once (self and admin)', async () => {
    const gina = await relay.register({ handle: 'gina@acme' });
    const rotated = await rest('POST', '/agents/me/keys', gina);
    expect(rotated.status).toBe(201);
    expect(rotated.body.api_key).toMatch(/^hr_/);
    expect((await rest('GET', '/agents/me', gina)).status).toBe(401);
    expect((await rest('GET', '/agents/me', rotated.body.api_key)).body.handle).toBe('gina@acme');
    const byAdmin = await rest('POST', '/admin/agents/gina@acme/keys', relay.adminKey);
    expect((await rest('GET', '/agents/me', rotated.body.api_key)).status).toBe(401);
    expect((await rest('GET', '/agents/me', byAdmin.body.api_key)).status).toBe(200);
    expect((await rest('POST', '/admin/agents/gina@acme/keys', gina)).status).toBe(401);
  });

  test('a disabled teammate loses its keys and its inbox; its pending handoffs stay readable by their senders', async () => {
    const hank = await relay.register({ handle: 'hank@acme' });
    const id = await handoff(alice, 'hank@acme');
    expect((await rest('POST', '/admin/agents/hank@acme/disable', relay.adminKey)).body).toMatchObject({
      handle: 'hank@acme',
    });
    expect((await rest('GET', '/agents/me', hank)).status).toBe(401);
    expect(
      (await relay.rpc(alice, 'message/send', { recipient: 'hank@acme', intent: 'inform', message: text('x') })).body
        .error.code,
    ).toBe(-32004);
    expect((await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result).toMatchObject({
      status: 'pending',
      recipient: { handle: 'hank@acme' },
    });
    expect((await relay.rpc(alice, 'agents/list', {})).body.result.teammates.map((t: any) => t.handle)).not.toContain(
      'hank@acme',
    );
  });

  test('no public read carries keys, key hashes, webhook URLs or secrets, tokens or inbox counts', async () => {
    const ivan = await relay.register({ handle: 'ivan@acme', slack_user_id: 'U0IVAN' });
    const card = await rest('PUT', '/agents/me/card', ivan, {
      notification_url: 'https://hooks.example.com/ivan-secret-path',
    });
    const id = await handoff(ivan, 'bob@acme');
    const hashes = (await relay.store.apiKeys.find({}).toArray()).map((k) => k._id);
    const forbidden = [
      ivan,
      alice,
      bob,
      carol,
      card.body.notification_secret,
      'hooks.example.com',
      ...hashes,
      'xoxb-',
      'api_key',
      'notification',
      'blocked',
      'slack_user_id',
      'unread',
      'inbox_count',
    ];
    const publicReads = [
      JSON.stringify((await relay.rpc(bob, 'agents/list', {})).body),
      JSON.stringify((await rest('GET', '/agents', bob)).body),
      JSON.stringify((await relay.rpc(bob, 'tasks/get', { task_id: id })).body.result.sender),
      JSON.stringify((await relay.rpc(bob, 'tasks/get', { task_id: id })).body.result.recipient),
      JSON.stringify(
        (await relay.rpc(bob, 'tasks/list', {})).body.result.items.map((i: any) => [i.sender, i.recipient]),
      ),
    ];
    for (const read of publicReads) for (const secret of forbidden) expect(read).not.toContain(secret);
  });
});

describe('rate limits', () => {
  test('mutating calls past the limit get -32003 with the retry-after, shared by every relay process', async () => {
    const shared = {
      RELAY_QUEUE_PREFIX: queuePrefix('rl'),
      MONGODB_DB: uniqueName('rl'),
      RELAY_RATE_LIMIT_PER_MINUTE: '5',
      RELAY_KEY_PEPPER: 'p'.repeat(40),
    };
    const one = await startTestRelay({ name: 'rl', env: shared });
    const two = await startTestRelay({ name: 'rl', env: shared });
    try {
      const kim = await one.register({ handle: 'kim@acme' });
      await one.register({ handle: 'lee@acme' });
      const send = (r: TestRelay) =>
        r.rpc(kim, 'message/send', { recipient: 'lee@acme', intent: 'inform', message: text('x') });
      const answers = [];
      for (let i = 0; i < 6; i += 1) answers.push(await send(i % 2 ? two : one));
      expect(answers.slice(0, 5).map((a) => a.body.error ?? 'ok')).toEqual(Array(5).fill('ok'));
      expect(answers[5]!.body.error).toMatchObject({
        code: -32003,
        data: { code: 'rate_limited', details: { retry_after_ms: expect.any(Number) } },
      });
      expect(answers[5]!.body.error.data.details.retry_after_ms).toBeGreaterThan(0);
      // Reads are not limited.
      expect((await two.rpc(kim, 'tasks/list', { filter: { role: 'sender' } })).body.result.items).toHaveLength(5);
    } finally {
      await one.stop();
      await two.stop();
    }
  });
});
