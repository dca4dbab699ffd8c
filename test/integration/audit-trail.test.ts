// Key rotation through POST /agents/me/keys/rotate and POST /agents/me/keys, and GET /agents/me/audit (a teammate's
// own history, newest first, cursor-paged) against a real relay; and the CLI's rotate-key and audit over them.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AuditEvent } from '../../relay-core/service/audit-trail';
import { sendHandoff, text } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');

let relay: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'audit_trail' });
});

afterAll(async () => {
  await relay?.stop();
});

async function cli(apiKey: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('node', [CLI, ...args], { env: { PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_API_KEY: apiKey } });
}

/** Every page of the caller's audit, `limit` at a time. */
async function walk(key: string, limit: number): Promise<{ events: AuditEvent[]; pages: number }> {
  const events: AuditEvent[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await relay.rest('GET', `/agents/me/audit${query}`, key);
    expect(page.status).toBe(200);
    expect(page.body.events.length).toBeLessThanOrEqual(limit);
    events.push(...page.body.events);
    cursor = page.body.next_cursor;
    pages++;
  } while (cursor);
  return { events, pages };
}

test('POST /agents/me/keys/rotate answers { agent_id, api_key, key_id } and the old key is refused; so does POST /agents/me/keys', async () => {
  const first = await relay.register({ handle: 'rita@acme' });
  const rotated = await relay.rest('POST', '/agents/me/keys/rotate', first);
  expect(rotated.status).toBe(201);
  expect(rotated.body).toEqual({
    agent_id: 'rita@acme',
    api_key: expect.stringMatching(/^hr_/),
    key_id: expect.stringMatching(/^[0-9a-f]{12}$/),
  });
  expect(rotated.body.api_key).toContain(rotated.body.key_id);
  expect((await relay.rest('GET', '/agents/me', first)).status).toBe(401);
  expect((await relay.rest('POST', '/agents/me/keys/rotate', first)).status).toBe(401);
  expect((await relay.rest('GET', '/agents/me', rotated.body.api_key)).body.handle).toBe('rita@acme');

  const again = await relay.rest('POST', '/agents/me/keys', rotated.body.api_key);
  expect(again.status).toBe(201);
  expect(again.body).toMatchObject({
    handle: 'rita@acme',
    api_key: expect.stringMatching(/^hr_/),
    key_id: expect.stringMatching(/^[0-9a-f]{12}$/),
  });
  expect((await relay.rest('GET', '/agents/me', rotated.body.api_key)).status).toBe(401);
  expect((await relay.rpc(rotated.body.api_key, 'agents/list', {})).status).toBe(401);
  expect((await relay.rest('GET', '/agents/me', again.body.api_key)).status).toBe(200);

  // Both rotations are in rita's history, newest first, with the key ids they issued.
  const { events } = await walk(again.body.api_key, 50);
  expect(events.filter((e) => e.action === 'key.rotated').map((e) => e.resource_id)).toEqual([
    again.body.key_id,
    rotated.body.key_id,
  ]);
  expect(events[0]).toMatchObject({ actor_handle: 'rita@acme', resource_type: 'api_key', via: 'api' });
});

test('handoff-relay rotate-key prints the new key once; the old one is refused from then on', async () => {
  const old = await relay.register({ handle: 'cli-rot@acme' });
  const { stdout } = await cli(old, 'rotate-key');
  const fresh = /^ {2}(hr_\S+)$/m.exec(stdout)?.[1];
  expect(stdout).toContain('Rotated the key of cli-rot@acme');
  expect(fresh).toBeDefined();
  expect((await relay.rest('GET', '/agents/me', old)).status).toBe(401);
  expect((await relay.rest('GET', '/agents/me', fresh)).body.handle).toBe('cli-rot@acme');
  await expect(cli(old, 'rotate-key')).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringContaining('the relay refused'),
  });
});

test('the audit pages newest first with a cursor, every event once, and each teammate sees only its own history', async () => {
  const alice = await relay.register({ handle: 'alice@acme' });
  const bob = await relay.register({ handle: 'bob@acme' });
  const carol = await relay.register({ handle: 'carol@acme' });
  const threads: string[] = [];
  for (let i = 0; i < 6; i++) threads.push(await sendHandoff(relay, alice, 'bob@acme', `work ${i}`));
  expect((await relay.rpc(bob, 'tasks/update', { task_id: threads[0], transition: 'accept' })).body.result.status).toBe(
    'accepted',
  );
  expect(
    (await relay.rpc(bob, 'message/send', { task_id: threads[0], message: text('on it') })).body.result.sequence_no,
  ).toBe(1);
  expect((await relay.rest('POST', '/agents/me/block', alice, { handle: 'carol@acme' })).status).toBe(200);
  expect((await relay.rest('DELETE', '/agents/me/block/carol@acme', alice)).status).toBe(200);
  const carolsOwn = await sendHandoff(relay, carol, 'bob@acme', 'carol to bob');

  // Thread events reach the logs as the outbox publishes them: wait for alice's 6 creates, bob's accept and message.
  const expected = 6 + 1 + 1 + 2;
  const { events, pages } = await waitUntil(async () => {
    const walked = await walk(alice, 3);
    return walked.events.length >= expected && walked;
  }, "alice's history");
  expect(events).toHaveLength(expected);
  expect(pages).toBe(Math.ceil(expected / 3));
  const times = events.map((e) => Date.parse(e.timestamp));
  expect(times).toEqual([...times].sort((a, b) => b - a));
  expect(new Set(events.map((e) => JSON.stringify(e))).size).toBe(events.length);
  expect(events.map((e) => e.action).slice(0, 2)).toEqual(['teammate.unblocked', 'teammate.blocked']);
  expect(
    events
      .filter((e) => e.action === 'thread.created')
      .map((e) => e.resource_id)
      .sort(),
  ).toEqual([...threads].sort());
  expect(events.find((e) => e.action === 'thread.accepted')).toMatchObject({
    actor_handle: 'bob@acme',
    resource_type: 'thread',
    resource_id: threads[0],
  });
  expect(events.find((e) => e.action === 'thread.message')).toMatchObject({
    actor_handle: 'bob@acme',
    resource_type: 'message',
    thread_id: threads[0],
  });
  expect(events.find((e) => e.action === 'teammate.blocked')).toMatchObject({
    actor_handle: 'alice@acme',
    resource_type: 'teammate',
    resource_id: 'carol@acme',
  });
  for (const e of events)
    expect(Object.keys(e)).toEqual(
      expect.arrayContaining(['timestamp', 'actor_handle', 'action', 'resource_type', 'resource_id', 'via']),
    );

  // One page of all of it reads the same events in the same order.
  expect((await walk(alice, 200)).events).toEqual(events);

  // Carol: her own handoff to bob, nothing of alice's threads, nor alice's block of her.
  const carols = await waitUntil(async () => {
    const walked = await walk(carol, 50);
    return walked.events.length >= 1 && walked.events;
  }, "carol's history");
  expect(carols).toEqual([
    expect.objectContaining({ action: 'thread.created', actor_handle: 'carol@acme', resource_id: carolsOwn }),
  ]);
  // Bob: the threads he received, never alice's blocks.
  const bobs = (await walk(bob, 50)).events;
  expect(bobs.filter((e) => e.action.startsWith('teammate.'))).toEqual([]);
  expect(new Set(bobs.map((e) => e.thread_id))).toEqual(new Set([...threads, carolsOwn]));

  // A cursor of alice's handed to carol still reads carol's own history only.
  const alicesCursor = (await relay.rest('GET', '/agents/me/audit?limit=1', alice)).body.next_cursor;
  const withIt = await relay.rest('GET', `/agents/me/audit?limit=50&cursor=${encodeURIComponent(alicesCursor)}`, carol);
  expect(withIt.status).toBe(200);
  for (const e of withIt.body.events) expect(e.thread_id).toBe(carolsOwn);

  expect((await relay.rest('GET', '/agents/me/audit?cursor=nope', alice)).body).toMatchObject({
    code: 'invalid_params',
    message: expect.stringContaining('query.cursor'),
  });
  expect((await relay.rest('GET', '/agents/me/audit?limit=0', alice)).status).toBe(400);
  expect((await relay.rest('GET', '/agents/me/audit', undefined)).status).toBe(401);

  // The CLI prints the same history, newest first.
  const { stdout } = await cli(alice, 'audit', '--all', '--limit', '4');
  expect(
    stdout
      .trim()
      .split('\n')
      .map((line) => line.split('  ')[1]),
  ).toEqual(events.map((e) => e.action));
});

test("a policy refusal is in the history of each teammate it is about, and nobody else's", async () => {
  const dan = await relay.register({ handle: 'dan@acme' });
  const erin = await relay.register({ handle: 'erin@contractor' });
  const frank = await relay.register({ handle: 'frank@acme' });
  const source =
    'rules:\n  - { id: no-contractors, match: { action: handoff.create, recipient: { team: contractor } }, effect: deny, reason: No }\n';
  expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source })).status).toBe(200);
  const refused = await waitUntil(async () => {
    const answer = await relay.rpc(dan, 'message/send', {
      recipient: 'erin@contractor',
      intent: 'inform',
      message: text('hi'),
    });
    return answer.body.error && answer;
  }, 'the policy to refuse');
  expect(refused.body.error.data.code).toBeDefined();
  for (const key of [dan, erin]) {
    expect((await walk(key, 50)).events).toEqual([
      expect.objectContaining({
        action: 'policy.denied',
        actor_handle: 'dan@acme',
        resource_type: 'policy_rule',
        resource_id: 'no-contractors',
        via: 'a2a',
      }),
    ]);
  }
  expect((await walk(frank, 50)).events).toEqual([]);
  expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: 'rules: []\n' })).status).toBe(200);
});
