// Deciding an approval (relay-core/service/approval-decisions.ts) on the in-memory threads and approval records: each
// approver's vote is recorded once; the vote that reaches the quorum applies the held call as its actor (a held create
// delivered, an approved append appended exactly once) or, when the policy now refuses it or the thread moved on,
// applies nothing and says why; a rejection needs a reason; a vote that is refused (not an approver, twice, already
// decided) changes nothing; the admin key's vote on an approver's behalf is audited. What an ended approval does to
// its thread in detail: approval-outcome.test.ts; over Slack, HTTP and the CLI: test/integration/approvals.test.ts.
import pino from 'pino';
import { approvalId, type ApprovalRecord, type Voter } from '../../relay-core/domain/approval';
import type { PolicyAuditDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { ApprovalDecisions } from '../../relay-core/service/approval-decisions';
import type { AccountEvent } from '../../relay-core/store/account-log';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { InMemoryApprovalRecords } from '../fakes/in-memory-approval-records';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, pendingApproval, recordingOutbox, storedPending, teammatesOf } from '../fakes/use-case-ports';

const sam = agent('sam@acme');
const rita = agent('rita@acme');
const lead = { ...agent('lead@acme'), slack_user_id: 'U0LEAD' };
const sre = agent('sre@acme');
const asLead: Voter = { handle: lead.handle, slack_user_id: 'U0LEAD', label: lead.handle };
const asSre: Voter = { handle: sre.handle, slack_user_id: null, label: sre.handle };
const approvers = [
  { label: lead.handle, handle: lead.handle, slack_user_id: 'U0LEAD', source: lead.handle, step: 0 },
  { label: sre.handle, handle: sre.handle, slack_user_id: null, source: sre.handle, step: 0 },
];

function setup(opts: { recheck?: string | null } = {}) {
  const threads = new InMemoryThreads();
  const records = new InMemoryApprovalRecords(threads);
  const outbox = recordingOutbox();
  const appended: Array<{ thread: string; approval: string; actor: string }> = [];
  const audits: PolicyAuditDoc[] = [];
  const accountEvents: AccountEvent[] = [];
  const decisions = new ApprovalDecisions({
    store: {
      readThread: (id) => threads.readThread(id),
      writeThread: (id, change) => threads.writeThread(id, change),
      policyAudit: {
        insertOne: async (doc) => {
          audits.push(doc);
          return { acknowledged: true, insertedId: doc._id };
        },
      },
      accountLog: { record: async (events) => void accountEvents.push(...events) },
    },
    outbox,
    teammates: teammatesOf([sam, rita, lead, sre]),
    records,
    appliers: {
      transition: (doc, _record, actor, emit, now) => ({
        next: {
          ...doc,
          status: 'accepted',
          status_history: [...doc.status_history, { status: 'accepted', by: actor.handle, at: now, via: 'api' }],
          outbox: [...doc.outbox, emit('thread.accepted')],
        },
        type: 'thread.accepted',
      }),
      message: async (doc, record, actor) => {
        appended.push({ thread: doc._id, approval: record.id, actor: actor.handle });
        return { message: `appended message ${doc.message_seq + 1}` };
      },
      recheck: async () => opts.recheck ?? null,
    },
    clock: { now: () => NOW },
    log: pino({ level: 'silent' }),
  });
  const tokens = new HandoffTokens('fast-tier-secret');
  /** A thread from Sam to Rita holding one pending approval (of its create by default), listed as open. */
  const holding = async (over: Partial<ApprovalRecord> = {}, thread: Partial<ThreadDoc> = {}) => {
    const doc = await storedPending(threads, tokens, sam, rita);
    const record = pendingApproval(doc, { id: approvalId(doc._id, 1), approvers, ...over });
    await threads.writeThread(doc._id, (d) => ({ ...d, ...thread, approvals: [record] }));
    await records.write(doc._id, record);
    threads.writes = 0;
    return { doc, id: record.id };
  };
  const heldCreate = (over: Partial<ApprovalRecord> = {}) =>
    holding(over, {
      status: 'awaiting_approval',
      hidden_from_recipient: true,
      status_history: [{ status: 'awaiting_approval', by: sam.handle, at: NOW, via: 'mcp' }],
    });
  const events = () => outbox.published.map((e) => e.type);
  const stored = async (id: string) => (await records.get(id)).record;
  return { threads, records, decisions, appended, audits, accountEvents, holding, heldCreate, events, stored };
}

describe('a held create', () => {
  test('the approver who makes the quorum delivers it to its recipient; the approval leaves the open list', async () => {
    const { decisions, threads, records, heldCreate, events } = setup();
    const { doc, id } = await heldCreate({ quorum: 1 });
    const answer = await decisions.decide(id, asLead, 'approve', 'slack');
    expect(answer).toMatchObject({
      changed: true,
      message: 'Approved: the handoff from sam@acme is delivered to rita@acme.',
      approval: { approval_id: id, status: 'approved', approved_by: [lead.handle], decided_by: lead.handle },
    });
    expect(await threads.readThread(doc._id)).toMatchObject({ status: 'pending', hidden_from_recipient: false });
    expect(events()).toEqual(['thread.created']);
    expect(await records.open(10)).toEqual([]);
  });

  test('a vote short of the quorum is recorded and told how many more it needs; nothing is delivered yet', async () => {
    const { decisions, threads, records, heldCreate, events } = setup();
    const { doc, id } = await heldCreate({ quorum: 2 });
    const first = await decisions.decide(id, asLead, 'approve', 'slack');
    expect(first).toMatchObject({
      changed: true,
      message: `Your approval of ${id} is recorded; it needs 1 more.`,
      approval: { status: 'pending', approved_by: [lead.handle] },
    });
    expect(await threads.readThread(doc._id)).toMatchObject({ status: 'awaiting_approval' });
    expect((await records.open(10)).map((e) => e._id)).toEqual([id]);
    const second = await decisions.decide(id, asSre, 'approve', 'api');
    expect(second.approval).toMatchObject({ status: 'approved', approved_by: [lead.handle, sre.handle] });
    expect(await threads.readThread(doc._id)).toMatchObject({ status: 'pending' });
    expect(events()).toEqual(['approval.voted', 'thread.created']);
  });

  test('a rejection with its reason rejects the handoff; it is never delivered', async () => {
    const { decisions, threads, heldCreate, events } = setup();
    const { doc, id } = await heldCreate();
    const answer = await decisions.decide(id, asSre, 'reject', 'api', 'Not this sprint');
    expect(answer).toMatchObject({ changed: true, approval: { status: 'rejected', reason: 'Not this sprint' } });
    expect(await threads.readThread(doc._id)).toMatchObject({ status: 'rejected', hidden_from_recipient: true });
    expect(events()).toEqual(['thread.rejected']);
  });
});

describe('refused votes change nothing', () => {
  test.each([
    [
      'a rejection without a reason',
      async (d: ApprovalDecisions, id: string) => d.decide(id, asLead, 'reject', 'slack', '  '),
      'no_reason',
      () => 'A rejection needs a reason. Nothing was changed.',
    ],
    [
      'someone who is not an approver',
      async (d: ApprovalDecisions, id: string) =>
        d.decide(id, { handle: 'eve@acme', slack_user_id: null, label: 'eve@acme' }, 'approve', 'api'),
      'not_approver',
      (id: string) => `eve@acme is not an approver of ${id} (approvers: lead@acme, sre@acme). Nothing was changed.`,
    ],
  ] as const)('%s', async (_what, vote, refusal, message) => {
    const { decisions, threads, heldCreate, events, stored } = setup();
    const { id } = await heldCreate({ quorum: 2 });
    const before = await stored(id);
    expect(await vote(decisions, id)).toMatchObject({ changed: false, refusal, message: message(id) });
    expect(threads.writes).toBe(0);
    expect(events()).toEqual([]);
    expect(await stored(id)).toEqual(before);
  });

  test('the same approver twice: the second vote is told it is already counted', async () => {
    const { decisions, threads, heldCreate, events } = setup();
    const { id } = await heldCreate({ quorum: 2 });
    await decisions.decide(id, asLead, 'approve', 'slack');
    const again = await decisions.decide(id, asLead, 'approve', 'slack');
    expect(again).toMatchObject({
      changed: false,
      refusal: 'already_voted',
      message: `You already approved ${id}; it needs 1 more approval(s). Nothing was changed.`,
    });
    expect(threads.writes).toBe(1);
    expect(events()).toEqual(['approval.voted']);
  });

  test('a vote on a decided approval says who decided it', async () => {
    const { decisions, heldCreate, events } = setup();
    const { id } = await heldCreate();
    await decisions.decide(id, asLead, 'approve', 'slack');
    expect(await decisions.decide(id, asSre, 'reject', 'api', 'Too late')).toMatchObject({
      changed: false,
      refusal: 'decided',
      message: `Approval ${id} is already approved by lead@acme. Nothing was changed.`,
    });
    expect(events()).toEqual(['thread.created']);
  });

  test('an approval this relay did not issue is not_found', async () => {
    const { decisions } = setup();
    await expect(decisions.decide('nope', asLead, 'approve', 'api')).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      decisions.decide(approvalId('00000000-0000-4000-8000-000000000000', 1), asLead, 'approve', 'api'),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('a held call on a thread', () => {
  test('approved, the transition is applied as its actor in the same write', async () => {
    const { decisions, threads, holding, events } = setup();
    const { doc, id } = await holding({ action: 'handoff.accept', actor: rita.handle });
    const answer = await decisions.decide(id, asLead, 'approve', 'slack');
    expect(answer.approval).toMatchObject({ status: 'approved', outcome: { applied: true } });
    expect(await threads.readThread(doc._id)).toMatchObject({ status: 'accepted' });
    expect(threads.writes).toBe(1);
    expect(events()).toEqual(['thread.accepted']);
  });

  test('approved while the policy in force now refuses it: nothing is applied, and the answer says why', async () => {
    const { decisions, threads, holding } = setup({ recheck: 'rule no-accepts denies handoff.accept' });
    const { doc, id } = await holding({ action: 'handoff.accept', actor: rita.handle });
    const answer = await decisions.decide(id, asLead, 'approve', 'slack');
    expect(answer.approval).toMatchObject({ status: 'approved', outcome: { applied: false } });
    expect(answer.approval.outcome!.message).toContain('rule no-accepts denies handoff.accept');
    expect(await threads.readThread(doc._id)).toMatchObject({ status: 'pending' });
  });

  test('an approved append is appended once as its actor; finishing it again appends nothing more', async () => {
    const { decisions, appended, holding, events, stored } = setup();
    const { doc, id } = await holding({ action: 'message.append', actor: rita.handle });
    const answer = await decisions.decide(id, asLead, 'approve', 'slack');
    expect(answer).toMatchObject({
      changed: true,
      message: 'Approved: appended message 1.',
      approval: { status: 'approved', outcome: { applied: true, message: 'appended message 1' } },
    });
    expect(await decisions.finishHeld(doc._id, id)).toEqual(await stored(id));
    expect(appended).toEqual([{ thread: doc._id, approval: id, actor: rita.handle }]);
    expect(events()).toEqual(['approval.decided']);
  });

  test('an approved append whose thread changed since it was asked is not appended', async () => {
    const { decisions, appended, holding } = setup();
    const { id } = await holding({ action: 'message.append', actor: rita.handle, state_version: 0 });
    const answer = await decisions.decide(id, asLead, 'approve', 'slack');
    expect(answer.message).toBe(
      `Approval ${id} is approved, but nothing was applied: the thread changed since it was asked (it is pending now).`,
    );
    expect(appended).toEqual([]);
  });
});

test("the admin key's vote on an approver's behalf says so and is audited for the thread's parties", async () => {
  const { decisions, heldCreate, audits, accountEvents } = setup();
  const { doc, id } = await heldCreate();
  const answer = await decisions.decide(id, { ...asLead, admin: true }, 'approve', 'api');
  expect(answer.message).toMatch(/\(Recorded as decided by the admin key on behalf of lead@acme\.\)$/);
  expect(audits).toEqual([
    expect.objectContaining({
      actor: 'admin',
      thread_id: doc._id,
      outcome: 'admin_on_behalf',
      reason: `the admin key approved ${id} on behalf of approver lead@acme`,
    }),
  ]);
  expect(accountEvents.map((e) => [e.handle, e.action])).toEqual([
    [sam.handle, 'policy.admin_on_behalf'],
    [rita.handle, 'policy.admin_on_behalf'],
  ]);
});
