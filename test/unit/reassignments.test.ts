// The reassignments use case (relay-core/service/reassignments.ts) on the in-memory thread port: Reassign hands a
// pending handoff to another teammate in one write (new token, timers from now, the old DM's records dropped), only
// for its sender or the lead it was escalated to; Resend makes one new handoff of an expired one. The same through
// Slack and JSON-RPC: test/integration/ (timers-reassign, slack timers).
import pino from 'pino';
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { assertParticipant } from '../../relay-core/domain/thread-lifecycle';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { Reassignments } from '../../relay-core/service/reassignments';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, recordingOutbox, storedPending } from '../fakes/use-case-ports';

const sender = agent('sender@acme');
const recipient = agent('recipient@acme');
const other = agent('other@acme');
const lead = agent('lead@acme');
const LATER = new Date(NOW.getTime() + 3_600_000);

function setup(team: AgentDoc[] = [sender, recipient, other, lead]) {
  const threads = new InMemoryThreads();
  const tokens = new HandoffTokens('fast-tier-secret');
  const outbox = recordingOutbox();
  const created: unknown[][] = [];
  const reassignments = new Reassignments({
    store: threads,
    teammates: {
      get: async (handle) => team.find((a) => a.handle === handle) ?? null,
      assertNotBlocked: (a, b) => {
        if (a.blocked.includes(b.handle) || b.blocked.includes(a.handle))
          throw new RelayError('teammate_blocked', `A block between ${a.handle} and ${b.handle}`);
      },
    },
    outbox,
    tokens,
    policy: { enforced: false, asIfSent: async () => undefined },
    // ThreadReads.readThread: the thread, for a participant only.
    reads: {
      readThread: async (caller, id) => {
        const doc = await threads.readThread(id);
        if (!doc) throw new RelayError('thread_not_found', `No thread ${id}`);
        assertParticipant(caller, doc);
        return doc;
      },
    },
    creates: {
      create: async (...args) => {
        created.push(args);
        return {
          task_id: 'resent-thread',
          status: { state: 'pending' },
          created_at: LATER.toISOString(),
          inbox_url: 'https://relay.test/inbox/resent-thread',
          recipient: recipient.handle,
        };
      },
    },
    clock: { now: () => LATER },
    log: pino({ level: 'silent' }),
  });
  const pending = async (over: Partial<ThreadDoc> = {}) => {
    const doc = await storedPending(threads, tokens, sender, recipient);
    if (Object.keys(over).length) await threads.writeThread(doc._id, (d) => ({ ...d, ...over }));
    threads.writes = 0;
    return (await threads.readThread(doc._id))!;
  };
  return { threads, reassignments, published: outbox.published, created, pending };
}

test('the sender reassigns a pending handoff: one write to the new recipient, a new token, timers from now, the old DM let go', async () => {
  const { threads, reassignments, published, pending } = setup();
  const doc = await pending({
    slack: { channel: 'D0OLD', ts: '1.1', posted_at: NOW },
    timers: { fired: { 'remind-1': NOW } },
  });
  const after = await reassignments.reassign(sender, doc._id, other.handle, 'slack');
  expect(threads.writes).toBe(1);
  expect(after).toMatchObject({
    to: other.handle,
    status: 'pending',
    slack: null,
    timers: { fired: {}, since: LATER },
    reassigned_from: [
      { handle: recipient.handle, slack: { channel: 'D0OLD', ts: '1.1' }, at: LATER, by: sender.handle },
    ],
  });
  expect(after.body_hash).not.toBe(doc.body_hash);
  expect(after.handoff_token!.nonce).not.toBe(doc.handoff_token!.nonce);
  expect(after.status_history.at(-1)).toEqual({ status: 'pending', by: sender.handle, at: LATER, via: 'slack' });
  expect(published.map((e) => [e.type, e.by, e.via])).toEqual([['thread.reassigned', sender.handle, 'slack']]);
});

test('the lead it was escalated to may reassign it, even to themselves', async () => {
  const { reassignments, pending } = setup();
  const doc = await pending({ timers: { fired: {}, escalated_to: { kind: 'lead', handle: lead.handle } } });
  const after = await reassignments.reassign(lead, doc._id, lead.handle, 'slack');
  expect(after).toMatchObject({ to: lead.handle, reassigned_from: [{ handle: recipient.handle, by: lead.handle }] });
});

test.each([
  ['the recipient', recipient, other.handle, 'not_authorized_transition', /^Only the sender \(sender@acme\)/],
  ['the sender, to themselves', sender, sender.handle, 'invalid_params', /^You cannot reassign a handoff to yourself$/],
  [
    'the sender, to whom it already goes',
    sender,
    recipient.handle,
    'invalid_params',
    /already goes to recipient@acme$/,
  ],
  ['the sender, to nobody', sender, 'ghost@acme', 'recipient_not_found', /^No active teammate with handle ghost@acme$/],
] as const)('refused: %s, and nothing is written', async (_who, caller, to, code, message) => {
  const { threads, reassignments, published, pending } = setup();
  const doc = await pending();
  await expect(reassignments.reassign(caller, doc._id, to, 'slack')).rejects.toMatchObject({
    code,
    message: expect.stringMatching(message),
  });
  expect(threads.writes).toBe(0);
  expect(published).toEqual([]);
});

test('refused: an accepted handoff is not reassigned; a block between the two refuses it too', async () => {
  const blocked = { ...other, blocked: [sender.handle] };
  const { threads, reassignments, pending } = setup([sender, recipient, blocked]);
  const accepted = await pending({ status: 'accepted' });
  await expect(reassignments.reassign(sender, accepted._id, blocked.handle, 'slack')).rejects.toMatchObject({
    code: 'teammate_blocked',
  });
  const unblocked = setup();
  const acceptedToo = await unblocked.pending({ status: 'accepted' });
  await expect(unblocked.reassignments.reassign(sender, acceptedToo._id, other.handle, 'slack')).rejects.toMatchObject({
    code: 'invalid_transition',
    message: 'Only a pending or unclaimed handoff can be reassigned; this one is accepted',
  });
  expect(threads.writes + unblocked.threads.writes).toBe(0);
});

test('resend makes one new handoff of an expired one, under a key from the old thread, and the old one records it', async () => {
  const { threads, reassignments, created, pending } = setup();
  const doc = await pending({ status: 'expired', metadata: { ticket: 'WEB-1' } });
  const answer = await reassignments.resend(sender, doc._id, 'slack');
  expect(answer.task_id).toBe('resent-thread');
  expect(created).toEqual([
    [
      sender,
      expect.objectContaining({
        to: recipient.handle,
        intent: doc.intent,
        summary: doc.summary,
        metadata: { ticket: 'WEB-1', resent_from: doc._id },
        idempotency_key: `resend:${doc._id}`,
      }),
      'slack',
    ],
  ]);
  expect(await threads.readThread(doc._id)).toMatchObject({ resent_as: 'resent-thread' });
});

test('refused: resend of a pending handoff, or by its recipient, creates nothing', async () => {
  const { reassignments, created, pending } = setup();
  const doc = await pending();
  await expect(reassignments.resend(sender, doc._id, 'slack')).rejects.toMatchObject({
    code: 'invalid_transition',
    message: 'Only an expired handoff can be resent; this one is pending',
  });
  const expired = await pending({ status: 'expired' });
  await expect(reassignments.resend(recipient, expired._id, 'slack')).rejects.toMatchObject({
    code: 'not_authorized_transition',
  });
  expect(created).toEqual([]);
});
