// Approvals as their readers see them (relay-core/service/approval-views.ts) on the in-memory threads and approval
// records: an approval is shown to its actor, the thread's sender and its approvers (by handle or Slack id), and to
// anyone else it does not exist; a thread's approvals are hidden from its recipient while the create is held; the
// admin listing is newest first, filtered by status and approver, up to a limit. Over HTTP and the CLI:
// test/integration/approvals.test.ts.
import { approvalId, type ApprovalRecord } from '../../relay-core/domain/approval';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { ApprovalViews } from '../../relay-core/service/approval-views';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { approvalView } from '../../relay-core/service/wire-views';
import { InMemoryApprovalRecords } from '../fakes/in-memory-approval-records';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, pendingApproval, storedPending } from '../fakes/use-case-ports';

const sam = agent('sam@acme');
const rita = agent('rita@acme');
const lead = { ...agent('lead@acme'), slack_user_id: 'U0LEAD' };
const eve = agent('eve@acme');
const leadInSlack = { ...agent('lead-bot@acme'), slack_user_id: 'U0LEAD' };
const minutes = (n: number) => new Date(NOW.getTime() + n * 60_000);

async function setup() {
  const threads = new InMemoryThreads();
  const records = new InMemoryApprovalRecords(threads);
  const views = new ApprovalViews({ records });
  const tokens = new HandoffTokens('fast-tier-secret');
  /** A thread from Sam to Rita holding `approvals`, each listed. */
  const holding = async (approvals: (doc: ThreadDoc) => ApprovalRecord[], over: Partial<ThreadDoc> = {}) => {
    const doc = await storedPending(threads, tokens, sam, rita);
    const held = approvals(doc);
    await threads.writeThread(doc._id, (d) => ({ ...d, ...over, approvals: held }));
    for (const record of held) await records.write(doc._id, record);
    return { doc: (await threads.readThread(doc._id))!, held };
  };
  return { views, holding };
}

describe('one approval', () => {
  test.each([
    ['its actor', rita],
    ["the thread's sender", sam],
    ['an approver, by handle', lead],
    ['an approver, by the Slack user they are', leadInSlack],
  ])('%s reads it', async (_who, caller) => {
    const { views, holding } = await setup();
    const { doc, held } = await holding((d) => [pendingApproval(d, { actor: rita.handle, action: 'handoff.accept' })]);
    expect(await views.viewFor(caller, held[0]!.id)).toEqual(approvalView(doc._id, held[0]!));
  });

  test('to anyone else it does not exist: the same answer as an unknown id', async () => {
    const { views, holding } = await setup();
    const { doc, held } = await holding((d) => [pendingApproval(d)]);
    const unknown = approvalId(doc._id, 9);
    await expect(views.viewFor(eve, held[0]!.id)).rejects.toMatchObject({
      code: 'not_found',
      message: `No approval ${held[0]!.id} that you can see`,
    });
    await expect(views.viewFor(sam, unknown)).rejects.toMatchObject({
      code: 'not_found',
      message: `No approval ${unknown} that you can see`,
    });
  });
});

describe("a thread's approvals", () => {
  test('its sender and the actor see them; its recipient sees a held create only once it is delivered', async () => {
    const { views, holding } = await setup();
    const { doc } = await holding((d) => [pendingApproval(d)], { hidden_from_recipient: true });
    expect(await views.forThread(sam, doc)).toHaveLength(1);
    expect(await views.forThread(rita, doc)).toEqual([]);
    expect(await views.forThread(rita, { ...doc, hidden_from_recipient: false })).toHaveLength(1);
  });

  test("the recipient's own held call is theirs to see even while the create is hidden", async () => {
    const { views, holding } = await setup();
    const { doc } = await holding((d) => [pendingApproval(d, { id: approvalId(d._id, 2), actor: rita.handle })], {
      hidden_from_recipient: true,
    });
    expect((await views.forThread(rita, doc)).map((v) => v.actor)).toEqual([rita.handle]);
  });
});

describe('the listing', () => {
  async function listed() {
    const { views, holding } = await setup();
    const first = await holding((d) => [pendingApproval(d, { created_at: minutes(0) })]);
    const second = await holding((d) => [
      pendingApproval(d, {
        created_at: minutes(1),
        status: 'rejected',
        approvers: [{ label: 'U0SRE', handle: null, slack_user_id: 'U0SRE', source: 'U0SRE', step: 0 }],
      }),
    ]);
    const third = await holding((d) => [pendingApproval(d, { created_at: minutes(2) })]);
    const id = (x: { held: ApprovalRecord[] }) => x.held[0]!.id;
    return { views, first: id(first), second: id(second), third: id(third) };
  }

  test('every approval, newest first, up to the limit', async () => {
    const { views, first, second, third } = await listed();
    expect((await views.list({})).map((v) => v.approval_id)).toEqual([third, second, first]);
    expect((await views.list({}, 2)).map((v) => v.approval_id)).toEqual([third, second]);
  });

  test('by status: the pending ones newest first, or the decided ones', async () => {
    const { views, first, second, third } = await listed();
    expect((await views.list({ status: 'pending' })).map((v) => v.approval_id)).toEqual([third, first]);
    expect((await views.list({ status: 'rejected' })).map((v) => v.approval_id)).toEqual([second]);
    expect(await views.list({ status: 'timed_out' })).toEqual([]);
  });

  test('by approver: by handle, label or Slack id', async () => {
    const { views, first, second, third } = await listed();
    expect((await views.list({ approver: 'lead@acme' })).map((v) => v.approval_id)).toEqual([third, first]);
    expect((await views.list({ approver: 'U0LEAD' })).map((v) => v.approval_id)).toEqual([third, first]);
    expect((await views.list({ approver: 'U0SRE' })).map((v) => v.approval_id)).toEqual([second]);
    expect(await views.list({ approver: 'eve@acme' })).toEqual([]);
  });
});
