// What an ended approval does to its thread (relay-core/service/approval-outcome.ts, pure) and how an approved call is
// applied (approved-calls.ts): a held create delivered, opened to its candidates or rejected; an approved transition
// applied as its actor, or why nothing was. The decisions that write them on the real store: test/integration/policy-*.
import type { ApprovalRecord } from '../../relay-core/domain/approval';
import type { OutboxEvent, ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import type { EventType } from '../../relay-core/domain/schemas';
import { conclude } from '../../relay-core/service/approval-outcome';
import { approvedCallAppliers } from '../../relay-core/service/approved-calls';
import { agent, NOW, pendingApproval } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const sender = agent('sender@acme');
const recipient = agent('recipient@acme');
const LATER = new Date(NOW.getTime() + 60_000);
const emit = (type: EventType): OutboxEvent => ({ id: `e-${type}`, type, at: LATER, by: 'lead@acme', via: 'slack' });

/** A thread in `status` carrying `record` (as the approval request stored it), one status change in its history. */
function held(status: ThreadDoc['status'], over: Partial<ApprovalRecord> = {}, doc: Partial<ThreadDoc> = {}) {
  const thread = {
    ...threadDocAt(sender.handle, recipient.handle, status, NOW),
    status_history: [{ status, by: sender.handle, at: NOW, via: 'mcp' }],
    ...doc,
  } as ThreadDoc;
  const record = pendingApproval(thread, over);
  return { thread: { ...thread, approvals: [record] }, record };
}

const stamp = { rule_id: 'r1', effect: 'require_approval', policy_version: 'v1' };

describe('a held create', () => {
  test('approved: delivered to its recipient as pending, thread.created out, the record applied', () => {
    const { thread, record } = held('awaiting_approval', { status: 'approved', decided_by: 'lead@acme' });
    const planned = conclude(thread, record, LATER, sender, emit);
    expect(planned.event).toBe('thread.created');
    expect(planned.message).toBe('Approved: the handoff from sender@acme is delivered to recipient@acme.');
    expect(planned.next).toMatchObject({
      status: 'pending',
      hidden_from_recipient: false,
      updated_at: LATER,
      outbox: [expect.objectContaining({ type: 'thread.created' })],
    });
    expect(planned.next!.status_history.at(-1)).toEqual({
      status: 'pending',
      by: sender.handle,
      at: LATER,
      via: 'mcp',
      policy: stamp,
    });
    expect(planned.next!.approvals![0].outcome).toEqual({
      applied: true,
      message: 'the handoff was delivered to its recipient',
    });
  });

  test('approved, sent to a role that named several: opened unclaimed to its candidates', () => {
    const { thread, record } = held('awaiting_approval', { status: 'approved' }, {
      to: 'role:frontend',
      to_target: 'role:frontend',
      candidates: ['a@acme', 'b@acme'],
    } as Partial<ThreadDoc>);
    const planned = conclude(thread, record, LATER, sender, emit);
    expect(planned.next!.status).toBe('unclaimed');
    expect(planned.message).toBe(
      'Approved: the handoff from sender@acme is open to role:frontend (a@acme, b@acme); the first to claim it gets it.',
    );
  });

  test('rejected: the thread is rejected with the approver’s reason, thread.rejected out', () => {
    const { thread, record } = held('awaiting_approval', {
      status: 'rejected',
      reason: 'Not this sprint',
      decided_by: 'lead@acme',
    });
    const planned = conclude(thread, record, LATER, sender, emit);
    expect(planned.event).toBe('thread.rejected');
    expect(planned.next).toMatchObject({ status: 'rejected', reject_reason: 'Not this sprint', rejected_at: LATER });
    expect(planned.next!.status_history.at(-1)).toMatchObject({ status: 'rejected', by: 'lead@acme', via: 'slack' });
    expect(planned.message).toBe('Rejected: sender@acme is told why; nothing is delivered to recipient@acme.');
  });

  test('refused: approved, but the policy in force now refuses it: rejected by the policy, nothing delivered', () => {
    const { thread, record } = held('awaiting_approval', { status: 'approved' });
    const planned = conclude(thread, record, LATER, sender, emit, 'the pair is now denied');
    expect(planned.next).toMatchObject({ status: 'rejected', reject_reason: 'the pair is now denied' });
    expect(planned.next!.status_history.at(-1)).toMatchObject({ by: 'policy' });
    expect(planned.record!.outcome).toEqual({ applied: false, message: 'nothing was applied: the pair is now denied' });
  });

  test('refused: a handoff no longer awaiting approval is left as it is, only the decision recorded', () => {
    const { thread, record } = held('awaiting_approval', { status: 'approved' });
    const planned = conclude({ ...thread, status: 'cancelled' }, record, LATER, sender, emit);
    expect(planned.event).toBe('approval.decided');
    expect(planned.next!.status).toBe('cancelled');
    expect(planned.message).toBe(
      `Approval ${record.id} is approved, but nothing was applied: the handoff is cancelled now.`,
    );
  });
});

describe('an approved transition', () => {
  const accept = (over: Partial<ApprovalRecord> = {}) =>
    held('pending', { action: 'handoff.accept', actor: recipient.handle, status: 'approved', ...over });
  const applyAccept = (doc: ThreadDoc) => ({
    next: { ...doc, status: 'accepted' as const, accepted_at: LATER },
    type: 'thread.accepted' as const,
  });

  test('is applied as its actor, in the same write, with its event', () => {
    const { thread, record } = accept();
    const planned = conclude(thread, record, LATER, recipient, emit, null, applyAccept);
    expect(planned).toMatchObject({
      event: 'thread.accepted',
      next: { status: 'accepted' },
      message: 'Approved: handoff.accept was applied as recipient@acme.',
    });
  });

  test.each([
    [
      'the thread changed since it was asked',
      { state_version: 0 },
      recipient,
      'the thread changed since it was asked (it is pending now)',
    ],
    [
      'its actor is no longer active',
      {},
      { ...recipient, status: 'disabled' as const },
      'recipient@acme is no longer an active teammate',
    ],
  ])('refused: %s; nothing is applied and it says why', (_why, over, actor, why) => {
    const { thread, record } = accept(over);
    const planned = conclude(thread, record, LATER, actor, emit, null, applyAccept);
    expect(planned.event).toBe('approval.decided');
    expect(planned.next!.status).toBe('pending');
    expect(planned.record!.outcome).toEqual({ applied: false, message: `nothing was applied: ${why}` });
  });

  test('refused by the transition itself: nothing is applied, in its words', () => {
    const { thread, record } = accept();
    const planned = conclude(thread, record, LATER, recipient, emit, null, () => ({ refusal: 'the token expired' }));
    expect(planned.record!.outcome).toEqual({ applied: false, message: 'nothing was applied: the token expired' });
  });

  test('rejected or timed out: not applied, the actor told', () => {
    const { thread, record } = accept({ status: 'timed_out' });
    expect(conclude(thread, record, LATER, recipient, emit, null, applyAccept)).toMatchObject({
      event: 'approval.decided',
      message: 'Timed out: handoff.accept by recipient@acme is not applied; they are told.',
    });
  });

  test('an approved append waits for its outcome: applied right after the write, no event yet', () => {
    const { thread, record } = accept({ action: 'message.append' });
    const planned = conclude(thread, record, LATER, recipient, emit, null, applyAccept);
    expect(planned.event).toBeUndefined();
    expect(planned.record!.outcome).toBeNull();
    expect(planned.message).toBe('Approved: message.append is being applied as recipient@acme.');
  });
});

describe('approved calls', () => {
  const calls: unknown[][] = [];
  const appliers = approvedCallAppliers({
    transitions: { applyApproved: () => ({ refusal: 'unused' }) },
    messages: {
      appendApproved: async (...args) => {
        calls.push(['append', ...args]);
        return { message: 'appended' };
      },
    },
    runs: {
      request: async (...args) => {
        calls.push(['run', ...args]);
        if (args[1] === 'refused-thread') throw new RelayError('conflict', 'A run is already queued');
        return { run_id: 'r1', status: 'queued' } as never;
      },
    },
    policy: { recheck: async () => null },
  });

  beforeEach(() => void calls.splice(0));

  test('an approved append goes to messages.appendApproved; an approved run is queued once as its actor', async () => {
    const { thread, record } = held('accepted', { action: 'message.append', status: 'approved' });
    expect(await appliers.message(thread, record, recipient)).toEqual({ message: 'appended' });
    const run = held('accepted', { action: 'handoff.run', status: 'approved', via: 'slack' });
    expect(await appliers.message(run.thread, run.record, recipient)).toEqual({
      message: 'handoff.run was applied as recipient@acme (run r1 queued)',
    });
    expect(calls.map((c) => c[0])).toEqual(['append', 'run']);
    expect(calls[1]).toEqual(['run', recipient, run.thread._id, 'slack', undefined, { approved: true }]);
  });

  test('refused: a run the relay refuses comes back as the refusal, in its words', async () => {
    const { thread, record } = held('accepted', { action: 'handoff.run', status: 'approved' });
    expect(await appliers.message({ ...thread, _id: 'refused-thread' }, record, recipient)).toEqual({
      refusal: 'A run is already queued',
    });
  });
});
