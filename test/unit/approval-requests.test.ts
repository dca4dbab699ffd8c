// Holding a call for approval (relay-core/service/approval-requests.ts) on the in-memory threads: a held call on a
// thread is recorded as one approval bound to that call and the thread's state, answered approval_pending in words
// with its approvers, opened for the sweep and its timers armed; the same call again gets the same approval, a call
// after the thread moved on a new one; an approver that does not resolve refuses it with nothing written. A held
// create: create-handoff.test.ts. The same through JSON-RPC and Slack: test/integration/approvals.test.ts.
import { approvalId } from '../../relay-core/domain/approval';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, approvalRequestsOn, approvalRule, NOW, recordingOutbox, storedPending } from '../fakes/use-case-ports';

const sam = agent('sam@acme');
const rita = agent('rita@acme');
const lead = agent('lead@acme');
const sre = agent('sre@acme');
const STAMP = { rule_id: 'needs-lead', effect: 'require_approval' as const, policy_version: 'v1' };
const HOUR = 3_600_000;

async function setup() {
  const threads = new InMemoryThreads();
  const outbox = recordingOutbox();
  const { requests, opened, armed } = approvalRequestsOn(threads, outbox, [sam, rita, lead, sre]);
  const doc = await storedPending(threads, new HandoffTokens('fast-tier-secret'), sam, rita);
  threads.writes = 0;
  /** Rita's accept, held by a rule that `approvers` approve. */
  const hold = async (over: { args?: Record<string, unknown>; approvers?: string[]; quorum?: number } = {}) => {
    const current = (await threads.readThread(doc._id))!;
    const error = await requests
      .request(rita, current, {
        action: 'handoff.accept',
        args: over.args ?? {},
        via: 'slack',
        rule: approvalRule(over.approvers ?? [lead.handle], {
          quorum: over.quorum ?? 1,
          remind_after: HOUR / 2,
          timeout: HOUR,
        }),
        stamp: STAMP,
        sender: sam,
        recipient: rita,
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(RelayError);
    return error as RelayError;
  };
  const approvals = async () => (await threads.readThread(doc._id))!.approvals ?? [];
  return { threads, outbox, opened, armed, doc, hold, approvals };
}

test('a held call is answered approval_pending, naming its approvers, and recorded as one pending approval', async () => {
  const { hold, approvals, doc, outbox, opened, armed, threads } = await setup();
  const error = await hold({ approvers: [lead.handle, sre.handle], quorum: 2 });
  const id = approvalId(doc._id, 1);
  expect(error.code).toBe('approval_pending');
  expect(error.message).toBe(
    `Policy rule needs-lead holds handoff.accept for approval by lead@acme, sre@acme (approval ${id}); nothing was changed. ` +
      'Waiting for a person is normal: check_approval tells where it stands, and the call is applied once approved.',
  );
  expect(error.details).toEqual({
    approval_id: id,
    approvers: [lead.handle, sre.handle],
    quorum: 2,
    rule_id: 'needs-lead',
    policy_version: 'v1',
  });
  expect(await approvals()).toEqual([
    expect.objectContaining({
      id,
      action: 'handoff.accept',
      actor: rita.handle,
      via: 'slack',
      status: 'pending',
      quorum: 2,
      state_version: doc.status_history.length,
      remind_at: new Date(NOW.getTime() + HOUR / 2),
      deadline: new Date(NOW.getTime() + HOUR),
      history: [{ at: NOW, what: 'requested', by: rita.handle }],
    }),
  ]);
  expect(outbox.published.map((e) => [e.type, e.by, e.via])).toEqual([['approval.requested', rita.handle, 'slack']]);
  expect(opened.map((r) => r.id)).toEqual([id]);
  expect(armed.map((r) => r.id)).toEqual([id]);
  // Nothing else changed: the thread is still pending.
  expect(await threads.readThread(doc._id)).toMatchObject({ status: 'pending' });
});

test('a quorum larger than the approvers named is as many as there are', async () => {
  const { hold, approvals } = await setup();
  await hold({ approvers: [lead.handle], quorum: 3 });
  expect((await approvals())[0]!.quorum).toBe(1);
});

test('the same call again gets the same approval: nothing new recorded, opened or published', async () => {
  const { hold, approvals, outbox, opened, threads } = await setup();
  const first = await hold();
  const again = await hold();
  expect(again.details).toEqual(first.details);
  expect(await approvals()).toHaveLength(1);
  expect(opened).toHaveLength(1);
  expect(outbox.published).toHaveLength(1);
  expect(threads.writes).toBe(1);
});

test('another call, or the same one after the thread moved on, is a new approval', async () => {
  const { hold, approvals, threads, doc } = await setup();
  const first = await hold({ args: { note: 'a' } });
  const other = await hold({ args: { note: 'b' } });
  await threads.writeThread(doc._id, (d: ThreadDoc) => ({
    ...d,
    status_history: [...d.status_history, { status: 'pending', by: sam.handle, at: NOW, via: 'api' }],
  }));
  const later = await hold({ args: { note: 'a' } });
  const ids = [first, other, later].map((e) => (e.details as { approval_id: string }).approval_id);
  expect(new Set(ids).size).toBe(3);
  expect((await approvals()).map((a) => a.state_version)).toEqual([
    doc.status_history.length,
    doc.status_history.length,
    doc.status_history.length + 1,
  ]);
});

test('an approver that does not resolve refuses the call; nothing is written or opened', async () => {
  const { hold, approvals, outbox, opened, threads } = await setup();
  const error = await hold({ approvers: ['ghost@acme'] });
  expect(error.code).toBe('policy_denied');
  expect(await approvals()).toEqual([]);
  expect(threads.writes).toBe(0);
  expect(outbox.published).toEqual([]);
  expect(opened).toEqual([]);
});
