// The transitions use case (relay-core/service/transitions.ts) on the in-memory thread port: who may make which
// transition, the acceptance verdict judged on the version the accept writes, a repeat answered without a write, and
// an approved accept judged by the same verdict. The same over HTTP, MCP and Slack: test/integration/.
import pino from 'pino';
import type { OutboxEvent } from '../../relay-core/domain/documents';
import type { ApprovalRecord } from '../../relay-core/domain/approval';
import { RelayError } from '../../relay-core/domain/errors';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { Transitions } from '../../relay-core/service/transitions';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, recordingOutbox, storedPending, unkeyedLedger } from '../fakes/use-case-ports';

const sender = agent('sender@acme');
const recipient = agent('recipient@acme');

function setup(now = NOW) {
  const threads = new InMemoryThreads();
  const tokens = new HandoffTokens('fast-tier-secret');
  const outbox = recordingOutbox();
  const transitions = new Transitions({
    store: threads,
    outbox,
    ledger: unkeyedLedger,
    tokens,
    policy: { forChange: async () => ({ stamp: undefined }) },
    claims: { claim: async () => Promise.reject(new Error('no claims here')) },
    clock: { now: () => now },
    log: pino({ level: 'silent' }),
  });
  return {
    threads,
    tokens,
    transitions,
    published: outbox.published,
    pending: () => storedPending(threads, tokens, sender, recipient),
  };
}

test('the recipient accepts a pending handoff: one write, thread.accepted out, the token consumed', async () => {
  const { threads, transitions, published, pending } = setup();
  const doc = await pending();
  const answer = await transitions.transition(recipient, { thread_id: doc._id, transition: 'accept' }, 'api');
  expect(answer).toEqual({ thread_id: doc._id, status: 'accepted', accepted_at: NOW.toISOString() });
  const stored = await threads.readThread(doc._id);
  expect(stored).toMatchObject({ status: 'accepted', version: 2, accepted_at: NOW });
  expect(stored!.handoff_token!.consumed_at).toEqual(NOW);
  expect(published.map((e) => e.type)).toEqual(['thread.accepted']);
});

test('the same accept asked again answers success and writes nothing', async () => {
  const { threads, transitions, published, pending } = setup();
  const doc = await pending();
  await transitions.transition(recipient, { thread_id: doc._id, transition: 'accept' }, 'api');
  const again = await transitions.transition(recipient, { thread_id: doc._id, transition: 'accept' }, 'api');
  expect(again).toMatchObject({ status: 'accepted' });
  expect(threads.writes).toBe(1);
  expect(published).toHaveLength(1);
});

test('only the recipient accepts: the sender is refused and nothing changes', async () => {
  const { threads, transitions, pending } = setup();
  const doc = await pending();
  await expect(
    transitions.transition(sender, { thread_id: doc._id, transition: 'accept' }, 'api'),
  ).rejects.toBeInstanceOf(RelayError);
  expect(threads.writes).toBe(0);
});

test("a presented token that is not the thread's is refused by the verdict, and the thread stays pending", async () => {
  const { threads, transitions, pending } = setup();
  const doc = await pending();
  const answer = await transitions.transition(
    recipient,
    { thread_id: doc._id, transition: 'accept', verdict: { goal_token: 'hto_not_this_one' } },
    'api',
  );
  expect(answer).toMatchObject({ accepted: false, result: 'STALE_HANDOFF', status: 'pending', accepted_at: null });
  expect((await threads.readThread(doc._id))!.status).toBe('pending');
  expect(threads.writes).toBe(0);
});

test("the thread's own token passes the verdict, and the answer carries the verdict alongside", async () => {
  const { tokens, transitions, pending } = setup();
  const doc = await pending();
  const token = tokens.derive(doc._id, doc.handoff_token!.nonce);
  const answer = await transitions.transition(
    recipient,
    { thread_id: doc._id, transition: 'accept', verdict: { goal_token: token } },
    'api',
  );
  expect(answer).toMatchObject({ accepted: true, result: 'ok', status: 'accepted' });
});

test('a button that showed another status is refused as state_changed and changes nothing', async () => {
  const { threads, transitions, pending } = setup();
  const doc = await pending();
  await expect(
    transitions.transition(
      recipient,
      { thread_id: doc._id, transition: 'decline', expected_status: 'accepted' },
      'slack',
    ),
  ).rejects.toMatchObject({ code: 'state_changed' });
  expect(threads.writes).toBe(0);
});

test('an approved Slack accept is judged by the same verdict: once its token expired it no longer applies', async () => {
  const later = new Date(NOW.getTime() + 30 * 24 * 3_600_000);
  const { transitions, pending } = setup(later);
  const doc = await pending();
  const record = {
    args: { thread_id: doc._id, transition: 'accept' },
    action: 'handoff.accept',
    via: 'slack',
    rule_id: 'r1',
    policy_version: 1,
  } as unknown as ApprovalRecord;
  const emit = (type: OutboxEvent['type']): OutboxEvent => ({
    id: 'e1',
    type,
    at: later,
    by: recipient.handle,
    via: 'api',
  });
  const applied = transitions.applyApproved(doc, record, recipient, emit, later);
  expect(applied).toMatchObject({ refusal: expect.stringContaining('the acceptance checks refused it') });
  const fresh = transitions.applyApproved(doc, record, recipient, emit, NOW);
  expect(fresh).toMatchObject({ type: 'thread.accepted', next: { status: 'accepted' } });
});
