// Human approval on the real relay (FerretDB, Redis, the fake Slack, signed Bolt requests, an injected clock):
// a held create from MCP to the approver's DM and on to the recipient's DM; Reject with a reason; quorum; 20
// concurrent clicks; cancel before approval; remind → escalate → timeout; a held accept applied once as its actor;
// and the refusals (non-approver, forged values, an approval that is not yours, approvers that do not exist).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { sendHandoff, text } from '../helpers/handoffs';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import {
  dmBlocks,
  dmText,
  explanations,
  openModal,
  press,
  submit,
  threadDoc,
  waitForExplanation,
} from '../helpers/slack-dm';
import { sendSlashCommand, type ButtonClick } from '../../scripts/fake-slack/slack-requests';
import { TestClock } from '../helpers/test-clock';
import { waitUntil } from '../helpers/wait-until';

const U = {
  sender: 'U0SENDER',
  recipient: 'U0RECIP',
  lead: 'U0LEAD',
  sre1: 'U0SREONE',
  sre2: 'U0SRETWO',
  boss: 'U0BOSS',
  stranger: 'U0STRANGER',
  ops: 'U0OPS',
  dba1: 'U0DBAONE',
  dba2: 'U0DBATWO',
};

const POLICY = `
rules:
  - id: infra-accept-needs-lead
    match: { action: handoff.accept, intent: propose_action, target_files: { under: [infra/] } }
    effect: require_approval
    approvers: [recipient_lead]
  - id: to-recipient-needs-lead
    match: { action: handoff.create, recipient: { handle: recipient@acme } }
    effect: require_approval
    approvers: [recipient_lead]
  - id: prod-needs-two-sre
    match: { action: handoff.create, recipient: { handle: prod@acme } }
    effect: require_approval
    approvers: [role:sre]
    quorum: 2
  - id: slow-lead-escalates
    match: { action: handoff.create, recipient: { handle: timers@acme } }
    effect: require_approval
    approvers: [lead@acme]
    remind_after: 10m
    escalate_to: [boss@acme]
    timeout: 1h
    on_timeout: escalate
  - id: to-nolead-needs-lead
    match: { action: handoff.create, recipient: { handle: nolead@acme } }
    effect: require_approval
    approvers: [recipient_lead]
  - id: memo-words-need-lead
    match: { action: [message.append, draft.attach], recipient: { handle: memo@acme } }
    effect: require_approval
    approvers: [lead@acme]
  - id: dba-work-needs-lead
    match: { action: handoff.create, recipient: { role: dba } }
    effect: require_approval
    approvers: [lead@acme]
`;

let slack: FakeSlack;
let relay: TestRelay;
const clock = new TestClock();
const keys: Record<string, string> = {};

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const user of Object.values(U)) slack.addUser(user);
  relay = await startTestRelay({ name: 'approvals', slack, clock });
  keys.lead = await relay.register({ handle: 'lead@acme', slack_user_id: U.lead });
  keys.boss = await relay.register({ handle: 'boss@acme', slack_user_id: U.boss });
  keys.sre1 = await relay.register({ handle: 'sre1@acme', role: 'sre', slack_user_id: U.sre1 });
  keys.sre2 = await relay.register({ handle: 'sre2@acme', role: 'sre', slack_user_id: U.sre2 });
  keys.sender = await relay.register({ handle: 'sender@acme', slack_user_id: U.sender });
  keys.recipient = await relay.register({ handle: 'recipient@acme', slack_user_id: U.recipient, lead: 'lead@acme' });
  keys.ops = await relay.register({ handle: 'ops@acme', slack_user_id: U.ops, lead: 'lead@acme' });
  keys.prod = await relay.register({ handle: 'prod@acme' });
  keys.timers = await relay.register({ handle: 'timers@acme' });
  keys.nolead = await relay.register({ handle: 'nolead@acme' });
  keys.memo = await relay.register({ handle: 'memo@acme' });
  keys.dba1 = await relay.register({ handle: 'dba1@acme', role: 'dba', slack_user_id: U.dba1 });
  keys.dba2 = await relay.register({ handle: 'dba2@acme', role: 'dba', slack_user_id: U.dba2 });
  const applied = await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: POLICY });
  expect(applied.status).toBe(200);
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

/** The approver's DM of an approval, once posted and recorded. */
async function approverDm(approvalId: string, user: string): Promise<{ channel: string; ts: string }> {
  const threadId = approvalId.split('_a')[0]!;
  return waitUntil(
    async () => (await threadDoc(relay, threadId)).slack_approvals?.[`approval:${approvalId}:${user}`],
    `the DM of ${approvalId} to ${user}`,
  );
}

function buttonValue(channel: string, ts: string, actionId: string): string {
  const button = dmBlocks(slack, channel, ts)
    .flatMap((b) => (b.type === 'actions' ? b.elements : []))
    .find((e: any) => e.action_id === actionId);
  if (!button) throw new Error(`no ${actionId} button: ${dmText(slack, channel, ts)}`);
  return button.value as string;
}

let clicks = 0;
function click(
  dm: { channel: string; ts: string },
  user: string,
  actionId: 'approval_approve' | 'approval_reject',
  over: Partial<ButtonClick> = {},
): ButtonClick {
  clicks += 1;
  return {
    user,
    channel: dm.channel,
    messageTs: dm.ts,
    actionId,
    value: over.value ?? buttonValue(dm.channel, dm.ts, actionId),
    responseUrl: slack.responseUrl(`approval-${clicks}`),
    triggerId: slack.triggerId(),
    ...over,
  };
}

async function held(
  to: string,
  summary: string,
  extra: Record<string, unknown> = {},
): Promise<{ threadId: string; approvalId: string }> {
  const { body } = await relay.rpc(keys.sender, 'message/send', {
    recipient: to,
    intent: 'inform',
    message: text(summary),
    ...extra,
  });
  expect(body.result).toMatchObject({ status: { state: 'awaiting_approval' } });
  return { threadId: body.result.task_id, approvalId: body.result.approval.approval_id };
}

const thread = (id: string): Promise<ThreadDoc> => threadDoc(relay, id);

describe('a create held for approval', () => {
  test('MCP create → approver DM → signed Approve click → delivered to the recipient, as from the sender', async () => {
    const mcp = await connectMcpHttp(relay.url, keys.sender);
    let answer: Record<string, any>;
    try {
      answer = toolOk(
        await mcp.callTool({
          name: 'handoff_to_teammate',
          arguments: { to: 'recipient@acme', intent: 'inform', summary: 'Rotate the staging keys' },
        }),
      );
    } finally {
      await mcp.close();
    }
    expect(answer).toMatchObject({
      status: 'awaiting_approval',
      approvers: ['lead@acme'],
      recipient: 'recipient@acme',
    });
    const id = answer.thread_id as string;

    // The sender sees it; the recipient does not, and nothing reaches them.
    const mine = await relay.rpc(keys.sender, 'tasks/get', { task_id: id });
    expect(mine.body.result).toMatchObject({
      status: 'awaiting_approval',
      approvals: [{ approval_id: answer.approval_id, status: 'pending', approvers: ['lead@acme'] }],
    });
    const sent = await relay.rpc(keys.sender, 'tasks/list', { filter: { role: 'sender' } });
    expect(sent.body.result.items.map((i: any) => [i.thread_id ?? i.task_id, i.status])).toContainEqual([
      id,
      'awaiting_approval',
    ]);
    expect((await relay.rpc(keys.recipient, 'tasks/get', { task_id: id })).body.error).toMatchObject({ code: -32006 });
    expect((await relay.rpc(keys.recipient, 'tasks/list', {})).body.result.items).toEqual([]);
    expect(
      (await relay.rpc(keys.recipient, 'tasks/update', { task_id: id, transition: 'accept' })).body.error,
    ).toMatchObject({ code: -32006 });

    const dm = await approverDm(answer.approval_id, U.lead);
    const shown = dmText(slack, dm.channel, dm.ts);
    expect(shown).toContain('Rotate the staging keys');
    expect(shown).toContain('to-recipient-needs-lead');
    // Read by a person: who asks to hand what to whom, as names and mentions.
    const reads = dmBlocks(slack, dm.channel, dm.ts).map((b: any) => b.text?.text ?? b.elements?.[0]?.text);
    expect(reads[0]).toBe("Approve sender's handoff to recipient: “Rotate the staging keys”?");
    expect(reads[2]).toBe(
      `<@${U.sender}> asks to hand this to <@${U.recipient}>; the handoff exactly as they will see it once approved:`,
    );
    const senderDm = await waitUntil(async () => (await thread(id)).slack_sender, 'the sender DM');
    expect(dmText(slack, senderDm.channel, senderDm.ts)).toContain(`Status: Waiting for approval by <@${U.lead}>`);
    expect((await thread(id)).slack).toBeNull();
    expect(slack.calls.some((c) => c.method === 'conversations.open' && c.args.users === U.recipient)).toBe(false);

    const approve = click(dm, U.lead, 'approval_approve');
    expect((await press(relay, approve)).status).toBe(200);
    expect(await waitForExplanation(slack, approve.responseUrl!, /^Approved/)).toBe(
      'Approved: the handoff from sender@acme is delivered to recipient@acme.',
    );
    const delivered = await waitUntil(async () => (await thread(id)).slack ?? undefined, 'the recipient DM');
    expect(dmText(slack, delivered.channel, delivered.ts)).toContain('Rotate the staging keys');
    const doc = await thread(id);
    expect(doc.status).toBe('pending');
    expect(doc.status_history.map((h) => [h.status, h.by])).toEqual([
      ['awaiting_approval', 'sender@acme'],
      ['pending', 'sender@acme'],
    ]);
    expect(doc.approvals![0]).toMatchObject({
      status: 'approved',
      decided_by: 'lead@acme',
      outcome: { applied: true },
    });
    await waitUntil(
      async () => dmText(slack, dm.channel, dm.ts).includes(`Approved by <@${U.lead}>`) || undefined,
      'the approver DM redrawn',
    );
    expect(dmText(slack, dm.channel, dm.ts)).not.toContain('approval_approve');
    expect((await relay.rpc(keys.recipient, 'tasks/get', { task_id: id })).body.result).toMatchObject({
      status: 'pending',
    });

    // A second click on the (now stale) button changes nothing and says why.
    const again = click(dm, U.lead, 'approval_approve', { value: approve.value });
    await press(relay, again);
    expect(await waitForExplanation(slack, again.responseUrl!, /Nothing was changed/)).toMatch(/already approved/);
    expect((await thread(id)).status_history).toHaveLength(2);
  });

  test('the same rule holds the create over JSON-RPC, with the approval in the answer and the A2A state', async () => {
    const { threadId, approvalId } = await held('recipient@acme', 'over the wire');
    expect(approvalId).toBe(`${threadId}_a1`);
    const task = await relay.rpc(keys.sender, 'GetTask', { id: threadId });
    const state = task.body.result?.status?.state;
    expect(['TASK_STATE_AUTH_REQUIRED', 'auth-required']).toContain(state);
  });

  test('the same rule holds a create from Slack (/handoff), and says so to the sender', async () => {
    const name = 'approvals-slash';
    const answer = await sendSlashCommand(`${relay.url}/slack/events`, relay.signingSecret, {
      user: U.sender,
      text: 'recipient@acme rotate the prod keys',
      responseUrl: slack.responseUrl(name),
      triggerId: slack.triggerId(),
    });
    expect(answer.status).toBe(200);
    const reply = await slack.waitFor('response_url', (c) => c.args.response_url === name);
    expect(String(reply.args.text)).toMatch(
      /^:raised_hand: Your handoff to `recipient@acme` is waiting for approval by `lead@acme` \(policy rule `to-recipient-needs-lead`\)/,
    );
    const doc = (
      await relay.store.threads.find({ from: 'sender@acme', summary: 'rotate the prod keys' }).toArray()
    )[0]!;
    expect(doc).toMatchObject({ status: 'awaiting_approval', hidden_from_recipient: true });
    expect(doc.status_history[0]).toMatchObject({
      via: 'slack',
      policy: { rule_id: 'to-recipient-needs-lead', effect: 'require_approval' },
    });
  });

  test('Reject asks for a reason in a modal; the sender is told why and the recipient never sees it', async () => {
    const { threadId, approvalId } = await held('recipient@acme', 'Drop the audit table');
    const dm = await approverDm(approvalId, U.lead);
    const rejectClick = click(dm, U.lead, 'approval_reject');
    const modal = await openModal(relay, slack, rejectClick);
    expect(modal.callback_id).toBe('approval_reject_modal');
    const empty = await submit(relay, {
      user: U.lead,
      view: modal,
      values: { approval_reject_reason: { reason: '  ' } },
    });
    expect(JSON.stringify(empty.text)).toContain('Please write a reason.');
    expect((await thread(threadId)).status).toBe('awaiting_approval');
    const done = await submit(relay, {
      user: U.lead,
      view: modal,
      values: { approval_reject_reason: { reason: 'Audit data must stay for 7 years' } },
    });
    expect(done.status).toBe(200);
    const doc = await thread(threadId);
    expect(doc).toMatchObject({ status: 'rejected', reject_reason: 'Audit data must stay for 7 years', slack: null });
    const view = (await relay.rpc(keys.sender, 'tasks/get', { task_id: threadId })).body.result;
    expect(view).toMatchObject({ status: 'rejected', reject_reason: 'Audit data must stay for 7 years' });
    const senderDm = await waitUntil(async () => {
      const d = (await thread(threadId)).slack_sender;
      return d && dmText(slack, d.channel, d.ts).includes('Why it was rejected') ? d : undefined;
    }, 'the sender DM to say why');
    expect(dmText(slack, senderDm.channel, senderDm.ts)).toContain('Audit data must stay for 7 years');
    await waitUntil(
      async () => dmText(slack, dm.channel, dm.ts).includes(`Rejected by <@${U.lead}>`) || undefined,
      'the approver DM redrawn',
    );
    expect((await relay.rpc(keys.recipient, 'tasks/get', { task_id: threadId })).body.error).toMatchObject({
      code: -32006,
    });
    expect((await thread(threadId)).slack).toBeNull();
  });

  test('a quorum of 2 (role:sre): the first approval is recorded, the second delivers', async () => {
    const { threadId, approvalId } = await held('prod@acme', 'Scale prod to 12 nodes');
    const [one, two] = [await approverDm(approvalId, U.sre1), await approverDm(approvalId, U.sre2)];
    const first = click(one, U.sre1, 'approval_approve');
    await press(relay, first);
    expect(await waitForExplanation(slack, first.responseUrl!, /recorded/)).toBe(
      `Your approval of ${approvalId} is recorded; it needs 1 more.`,
    );
    expect((await thread(threadId)).status).toBe('awaiting_approval');
    // The other approver's DM (and the voter's own) is redrawn to show the vote so far.
    for (const dm of [two, one]) {
      await waitUntil(
        async () => dmText(slack, dm.channel, dm.ts).includes(`1 of 2 approved: <@${U.sre1}>`) || undefined,
        'the DMs to show the partial vote',
      );
    }
    expect(dmText(slack, two.channel, two.ts)).toContain('approval_approve');
    expect((await thread(threadId)).outbox.filter((e) => e.type === 'approval.voted')).toHaveLength(1);
    const twice = click(one, U.sre1, 'approval_approve');
    await press(relay, twice);
    expect(await waitForExplanation(slack, twice.responseUrl!, /Nothing was changed/)).toMatch(
      /^You already approved this request/,
    );
    const second = click(two, U.sre2, 'approval_approve');
    await press(relay, second);
    await waitForExplanation(slack, second.responseUrl!, /^Approved/);
    const doc = await thread(threadId);
    expect(doc.status).toBe('pending');
    expect(doc.approvals![0]!.approvals.map((v) => v.by)).toEqual(['sre1@acme', 'sre2@acme']);
  });

  test('20 concurrent Approve clicks make exactly one transition', async () => {
    const { threadId, approvalId } = await held('recipient@acme', 'Concurrent approvals');
    const dm = await approverDm(approvalId, U.lead);
    const value = buttonValue(dm.channel, dm.ts, 'approval_approve');
    const all = Array.from({ length: 20 }, () => click(dm, U.lead, 'approval_approve', { value }));
    const answers = await Promise.all(all.map((c) => press(relay, c)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await waitUntil(
      async () => all.filter((c) => explanations(slack, c.responseUrl!).length > 0).length === 20 || undefined,
      'every click answered',
    );
    const doc = await thread(threadId);
    expect(doc.status).toBe('pending');
    expect(doc.status_history.filter((h) => h.status === 'pending')).toHaveLength(1);
    expect(doc.outbox.filter((e) => e.type === 'thread.created')).toHaveLength(1);
    const words = all.map((c) => String(explanations(slack, c.responseUrl!)[0]!.args.text));
    expect(words.filter((w) => w.startsWith('Approved:'))).toHaveLength(1);
    expect(words.filter((w) => /Nothing was changed/.test(w))).toHaveLength(19);
  });

  test('approving after the sender cancelled applies nothing and says so; the DM loses its buttons', async () => {
    const { threadId, approvalId } = await held('recipient@acme', 'Cancel me');
    const dm = await approverDm(approvalId, U.lead);
    const value = buttonValue(dm.channel, dm.ts, 'approval_approve');
    expect((await relay.rpc(keys.sender, 'tasks/cancel', { task_id: threadId })).body.result).toMatchObject({
      status: 'cancelled',
    });
    await waitUntil(
      async () => dmText(slack, dm.channel, dm.ts).includes('Nothing to approve any more') || undefined,
      'the approver DM to show the cancel',
    );
    const stale = click(dm, U.lead, 'approval_approve', { value });
    await press(relay, stale);
    expect(await waitForExplanation(slack, stale.responseUrl!, /Nothing was changed/)).toBe(
      'There is nothing to approve any more: the handoff is cancelled now. Nothing was changed.',
    );
    const viaApi = await relay.rest('POST', `/admin/approvals/${approvalId}/approve`, relay.adminKey, {
      as: 'lead@acme',
    });
    expect(viaApi.status).toBe(200);
    expect(viaApi.body.message).toBe(
      `Approval ${approvalId} is approved, but nothing was applied: the handoff is cancelled now. (Recorded as decided by the admin key on behalf of lead@acme.)`,
    );
    const doc = await thread(threadId);
    expect(doc.status).toBe('cancelled');
    expect(doc.slack).toBeNull();
    expect(doc.outbox.map((e) => e.type)).not.toContain('thread.created');
  });
});

describe('refusals change nothing', () => {
  test('a stranger, a forged value, a value naming another approval, and someone else’s approval over the API', async () => {
    const { threadId, approvalId } = await held('recipient@acme', 'Refusals');
    const dm = await approverDm(approvalId, U.lead);
    const stranger = click(dm, U.stranger, 'approval_approve');
    await press(relay, stranger);
    expect(await waitForExplanation(slack, stranger.responseUrl!, /Nothing was changed/)).toBe(
      'Only the approvers of this request (lead@acme) can decide it. Nothing was changed.',
    );
    const garbage = click(dm, U.lead, 'approval_approve', { value: '{"a":"nope"}' });
    await press(relay, garbage);
    expect(await waitForExplanation(slack, garbage.responseUrl!, /nothing was changed/)).toBe(
      'This button is not one handoff-relay recognises; nothing was changed.',
    );
    const forged = click(dm, U.lead, 'approval_approve', {
      value: JSON.stringify({ a: approvalId, b: '0000000000000000' }),
    });
    await press(relay, forged);
    expect(await waitForExplanation(slack, forged.responseUrl!, /nothing was changed/)).toBe(
      'This button does not match any approval handoff-relay asked for; nothing was changed.',
    );
    const unknown = click(dm, U.lead, 'approval_approve', {
      value: JSON.stringify({ a: `${threadId}_a7`, b: '0123456789abcdef' }),
    });
    await press(relay, unknown);
    expect(await waitForExplanation(slack, unknown.responseUrl!, /nothing was changed/)).toBe(
      'This button does not match any approval handoff-relay asked for; nothing was changed.',
    );

    const notMine = await relay.rest('POST', `/approvals/${approvalId}/approve`, keys.sender, {});
    expect(notMine.status).toBe(403);
    expect(notMine.body).toMatchObject({
      code: 'forbidden',
      message: `sender@acme is not an approver of ${approvalId} (approvers: lead@acme). Nothing was changed.`,
    });
    const asOther = await relay.rest('POST', `/admin/approvals/${approvalId}/approve`, relay.adminKey, {
      as: 'boss@acme',
    });
    expect(asOther.status).toBe(403);
    const badId = await relay.rest('POST', '/admin/approvals/not-an-id/approve', relay.adminKey, { as: 'lead@acme' });
    expect(badId).toMatchObject({ status: 400, body: { code: 'invalid_params' } });
    const noReason = await relay.rest('POST', `/approvals/${approvalId}/reject`, keys.lead, {});
    expect(noReason.body.message).toMatch(/^body\.reason: /);
    expect((await relay.rest('GET', `/approvals/${approvalId}`, keys.recipient)).status).toBe(404);

    const doc = await thread(threadId);
    expect(doc.status).toBe('awaiting_approval');
    expect(doc.approvals![0]).toMatchObject({ status: 'pending', approvals: [] });
    // The approver's own key decides it.
    const mine = await relay.rest('POST', `/approvals/${approvalId}/reject`, keys.lead, { reason: 'Not this week' });
    expect(mine.body).toMatchObject({ changed: true, approval: { status: 'rejected', reason: 'Not this week' } });
  });

  test('an approver that does not resolve: at apply (named), and at the call (recipient without a lead)', async () => {
    const bad = await relay.rest('PUT', '/admin/policy', relay.adminKey, {
      source: `rules:\n  - { id: x, effect: require_approval, approvers: [lead@acme, ghost@acme] }\n`,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('policy: rules[0].approvers[1]: no active teammate with handle ghost@acme');
    const role = await relay.rest('PUT', '/admin/policy', relay.adminKey, {
      source: `rules:\n  - { id: x, effect: require_approval, approvers: [role:nobody] }\n`,
    });
    expect(role.body.message).toBe(
      'policy: rules[0].approvers[0]: role:nobody names no active teammate (nobody has role "nobody")',
    );

    const refused = await relay.rpc(keys.sender, 'message/send', {
      recipient: 'nolead@acme',
      intent: 'inform',
      message: text('who approves?'),
    });
    expect(refused.body.error).toMatchObject({
      code: -32020,
      message:
        'Policy rule to-nolead-needs-lead needs approval, but approver recipient_lead: nolead@acme has no lead on their card; ask an admin to fix the policy or the card',
    });
    expect(await relay.store.threads.countDocuments({ to: 'nolead@acme' })).toBe(0);
  });
});

describe('a held accept (not a create)', () => {
  const proposal = (summary: string) =>
    sendHandoff(relay, keys.sender, 'ops@acme', summary, {
      intent: 'propose_action',
      proposed_action: {
        description: 'Raise the pool size',
        target_files: ['infra/db.tf'],
        rationale: 'Connections run out at peak',
      },
    });

  test('answers approval_pending and changes nothing; once approved it is applied once, as the recipient', async () => {
    const id = await proposal('infra change');
    const first = await relay.rpc(keys.ops, 'tasks/update', { task_id: id, transition: 'accept' });
    expect(first.body.error).toMatchObject({
      code: -32021,
      data: { details: { approvers: ['lead@acme'], rule_id: 'infra-accept-needs-lead' } },
    });
    const approvalId = first.body.error.data.details.approval_id as string;
    expect(first.body.error.message).toContain(`(approval ${approvalId}); nothing was changed`);
    // The same call again is the same approval, not a second one.
    const again = await relay.rpc(keys.ops, 'tasks/update', { task_id: id, transition: 'accept' });
    expect(again.body.error.data.details.approval_id).toBe(approvalId);
    const before = await thread(id);
    expect(before.status).toBe('pending');
    expect(before.approvals).toHaveLength(1);

    const mcp = await connectMcpHttp(relay.url, keys.ops);
    try {
      const checked = toolOk(await mcp.callTool({ name: 'check_approval', arguments: { approval_id: approvalId } }));
      expect(checked.approvals[0]).toMatchObject({
        approval_id: approvalId,
        status: 'pending',
        action: 'handoff.accept',
        actor: 'ops@acme',
        approvers: ['lead@acme'],
      });
    } finally {
      await mcp.close();
    }

    const dm = await approverDm(approvalId, U.lead);
    // The approver reads the call in words (who, what, which handoff), not as JSON.
    const approverReads = dmBlocks(slack, dm.channel, dm.ts).map((b: any) => b.text?.text ?? b.elements?.[0]?.text);
    expect(approverReads.slice(0, 3)).toEqual([
      "Approve ops's accept of “infra change”?",
      expect.stringContaining('Policy rule `infra-accept-needs-lead` asks you to approve this'),
      `*<@${U.ops}> wants to accept “infra change”* (via A2A).`,
    ]);
    expect(dmText(slack, dm.channel, dm.ts)).not.toContain('```');
    const approve = click(dm, U.lead, 'approval_approve');
    await press(relay, approve);
    expect(await waitForExplanation(slack, approve.responseUrl!, /^Approved/)).toBe(
      'Approved: handoff.accept was applied as ops@acme.',
    );
    const doc = await thread(id);
    expect(doc.status).toBe('accepted');
    expect(doc.status_history.at(-1)).toMatchObject({
      status: 'accepted',
      by: 'ops@acme',
      policy: { rule_id: 'infra-accept-needs-lead', effect: 'require_approval' },
    });
    expect(doc.outbox.filter((e) => e.type === 'thread.accepted')).toHaveLength(1);
    // Each side hears of it once, in a reply under its own DM: the sender that it was accepted, ops that the
    // approver let the accept through.
    const acceptedEvent = doc.outbox.find((e) => e.type === 'thread.accepted')!;
    const notices = await waitUntil(async () => {
      const now = await thread(id);
      const keys = [`sender:e:${acceptedEvent.id}`, `recipient:e:${acceptedEvent.id}`];
      return keys.every((k) => now.slack_replies?.[k]) ? now : undefined;
    }, 'both notices of the approved accept');
    const replyText = (dmPost: { channel: string }, ts: string) =>
      slack.messages.get(dmPost.channel)!.find((m) => m.ts === ts)!.blocks as any[];
    expect(replyText(notices.slack_sender!, notices.slack_replies![`sender:e:${acceptedEvent.id}`]!)[0].text.text).toBe(
      `:white_check_mark: <@${U.ops}> accepted your handoff “infra change”.`,
    );
    expect(replyText(notices.slack!, notices.slack_replies![`recipient:e:${acceptedEvent.id}`]!)[0].text.text).toBe(
      `:white_check_mark: Your accept of “infra change” was approved by <@${U.lead}> and applied.`,
    );
    // The approver's DM says how it ended in words.
    const statusOf = () =>
      dmBlocks(slack, dm.channel, dm.ts).find((b: any) => b.block_id === 'approval_status')?.text.text as string;
    await waitUntil(async () => statusOf().includes('went through') || undefined, 'the approver DM redrawn');
    expect(statusOf()).toMatch(
      new RegExp(
        `^:white_check_mark: \\*Approved by <@${U.lead}> · <!date\\^\\d+\\^[^>]+>\\*( \\(by the admin key on their behalf\\))?\\n_<@${U.ops}>'s accept of “infra change” went through\\._$`,
      ),
    );
    const viaApi = await relay.rest('POST', `/admin/approvals/${approvalId}/approve`, relay.adminKey, {
      as: 'lead@acme',
    });
    expect(viaApi.status).toBe(409);
    expect((await thread(id)).status_history).toHaveLength(2);
  });

  test('Accept pressed in Slack on a held change: the DM says who must approve, not that it was refused', async () => {
    const id = await proposal('infra change from Slack');
    const { slack: dm } = await waitUntil(async () => {
      const doc = await threadDoc(relay, id);
      return doc.slack ? doc : undefined;
    }, "ops's DM");
    const accept = (dmBlocks(slack, dm!.channel, dm!.ts) as any[])
      .flatMap((b) => (b.type === 'actions' ? b.elements : []))
      .find((e) => e.action_id === 'handoff_accept');
    expect(
      (
        await press(relay, {
          user: U.ops,
          channel: dm!.channel,
          messageTs: dm!.ts,
          actionId: 'handoff_accept',
          value: accept.value,
          responseUrl: slack.responseUrl(`held-${id}`),
        })
      ).status,
    ).toBe(200);
    const waits = `*Status: Waiting for you to accept or decline · your accept waits for approval by <@${U.lead}>*`;
    await waitUntil(
      async () => dmText(slack, dm!.channel, dm!.ts).includes(waits) || undefined,
      'the DM to say it waits',
    );
    const doc = await thread(id);
    expect(doc.status).toBe('pending');
    // Once the approver's DM is out (the approval's own event, whose sync redraws this DM too), it still says so:
    // the status line comes from the thread, not from a notice drawn once after the click.
    await approverDm(doc.approvals![0]!.id, U.lead);
    await waitUntil(async () => (await threadDoc(relay, id)).slack_approvals || undefined, 'the approval DM recorded');
    expect(dmText(slack, dm!.channel, dm!.ts)).toContain(waits);
    expect(dmText(slack, dm!.channel, dm!.ts)).not.toContain('Not accepted');
    // While the accept waits for its approval, the DM does not offer it again (nor Hand to my agent, which accepts).
    const offered = dmBlocks(slack, dm!.channel, dm!.ts)
      .flatMap((b: any) => (b.type === 'actions' ? b.elements : []))
      .map((e: any) => e.action_id);
    expect(offered).not.toContain('handoff_accept');
    expect(offered).not.toContain('handoff_run_agent');
    expect(offered).toContain('handoff_decline');
  });

  test('approved after the sender cancelled: nothing is applied, and the approval says so', async () => {
    const id = await proposal('cancelled infra change');
    const asked = await relay.rpc(keys.ops, 'tasks/update', { task_id: id, transition: 'accept' });
    const approvalId = asked.body.error.data.details.approval_id as string;
    await relay.rpc(keys.sender, 'tasks/cancel', { task_id: id });
    const answer = await relay.rest('POST', `/admin/approvals/${approvalId}/approve`, relay.adminKey, { as: U.lead });
    expect(answer.body.message).toBe(
      `Approval ${approvalId} is approved, but nothing was applied: the thread changed since it was asked (it is cancelled now). (Recorded as decided by the admin key on behalf of lead@acme.)`,
    );
    expect((await thread(id)).status).toBe('cancelled');
    const checked = await relay.rpc(keys.ops, 'approvals/get', { approval_id: approvalId });
    expect(checked.body.result.approvals[0]).toMatchObject({ status: 'approved', outcome: { applied: false } });
  });
});

describe('held appends and drafts (message.append, draft.attach)', () => {
  test('a held message answers approval_pending and adds nothing; approved, it is appended once, as its author', async () => {
    const id = await sendHandoff(relay, keys.sender, 'memo@acme', 'memo thread');
    const ask = () =>
      relay.rpc(keys.sender, 'message/send', { task_id: id, message: text('The rollout moves to Thursday') });
    const first = await ask();
    expect(first.body.error).toMatchObject({
      code: -32021,
      data: { details: { approvers: ['lead@acme'], rule_id: 'memo-words-need-lead' } },
    });
    const approvalId = first.body.error.data.details.approval_id as string;
    expect((await ask()).body.error.data.details.approval_id).toBe(approvalId);
    expect(await thread(id)).toMatchObject({
      message_seq: 0,
      approvals: [{ id: approvalId, action: 'message.append', actor: 'sender@acme', status: 'pending' }],
    });
    expect(await relay.store.messages.countDocuments({ thread_id: id })).toBe(0);

    const dm = await approverDm(approvalId, U.lead);
    expect(dmText(slack, dm.channel, dm.ts)).toContain('The rollout moves to Thursday');
    // Twenty approvals at once (the approver's own key) append it once.
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => relay.rest('POST', `/approvals/${approvalId}/approve`, keys.lead, {})),
    );
    expect(answers.filter((a) => a.status === 200).map((a) => a.body.message)).toEqual([
      `Approved: message.append was applied as sender@acme (message 1).`,
    ]);
    const doc = await thread(id);
    expect(doc.message_seq).toBe(1);
    expect(doc.outbox.filter((e) => e.type === 'thread.message')).toHaveLength(1);
    expect(doc.approvals![0]).toMatchObject({
      status: 'approved',
      outcome: { applied: true, message: 'message.append was applied as sender@acme (message 1)' },
    });
    const messages = (await relay.rpc(keys.memo, 'tasks/get', { task_id: id })).body.result.messages;
    expect(messages).toEqual([
      expect.objectContaining({ from: 'sender@acme', body: 'The rollout moves to Thursday', sequence_no: 1 }),
    ]);
    await waitUntil(
      async () => dmText(slack, dm.channel, dm.ts).includes(`Approved by <@${U.lead}>`) || undefined,
      'the approver DM redrawn',
    );
    expect(await relay.store.approvals.findOne({ _id: approvalId })).toMatchObject({ status: 'approved' });
    expect(await relay.store.approvals.findOne({ _id: approvalId, open: 1 })).toBeNull();
  });

  test('a held draft (draft.attach) is applied the same way; rejected, nothing is added', async () => {
    const id = await sendHandoff(relay, keys.sender, 'memo@acme', 'draft thread', {
      intent: 'propose_action',
      proposed_action: { description: 'Bump the pool', target_files: ['db/pool.ts'], rationale: 'peaks' },
    });
    const draft = (body: string) =>
      relay.rpc(keys.memo, 'message/send', { task_id: id, message: text(body), payload: { kind: 'draft' } });
    const held = await draft('diff --git a/db/pool.ts');
    expect(held.body.error).toMatchObject({ code: -32021, data: { details: { rule_id: 'memo-words-need-lead' } } });
    const approvalId = held.body.error.data.details.approval_id as string;
    expect((await thread(id)).approvals![0]).toMatchObject({ action: 'draft.attach', actor: 'memo@acme' });
    const approved = await relay.rest('POST', `/approvals/${approvalId}/approve`, keys.lead, {});
    expect(approved.body.message).toBe('Approved: draft.attach was applied as memo@acme (message 1).');
    const rejectedAsk = await draft('second draft');
    const second = rejectedAsk.body.error.data.details.approval_id as string;
    expect(second).not.toBe(approvalId);
    const rejected = await relay.rest('POST', `/approvals/${second}/reject`, keys.lead, {
      reason: 'One draft is enough',
    });
    expect(rejected.body).toMatchObject({ changed: true, approval: { status: 'rejected' } });
    const doc = await thread(id);
    expect(doc.message_seq).toBe(1);
    expect(await relay.store.messages.findOne({ _id: `${id}:1` })).toMatchObject({
      from: 'memo@acme',
      payload: { kind: 'draft' },
    });
  });
});

describe('the policy is asked again when an approved call is applied', () => {
  const denying = (rule: string) => `rules:\n${rule}${POLICY.replace(/^\nrules:\n/, '')}`;
  afterEach(async () => {
    expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: POLICY })).status).toBe(200);
  });

  test('a held message approved after the policy changed to deny is not applied, and says why', async () => {
    const id = await sendHandoff(relay, keys.sender, 'memo@acme', 'memo, then policy change');
    const asked = await relay.rpc(keys.sender, 'message/send', { task_id: id, message: text('Ship it tonight') });
    const approvalId = asked.body.error.data.details.approval_id as string;
    const changed = denying(
      '  - { id: memo-frozen, match: { action: message.append, recipient: { handle: memo@acme } }, effect: deny, reason: memo is frozen }\n',
    );
    expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: changed })).status).toBe(200);
    const answer = await relay.rest('POST', `/approvals/${approvalId}/approve`, keys.lead, {});
    expect(answer.body.message).toMatch(
      new RegExp(
        `^Approval ${approvalId} is approved, but nothing was applied: the policy changed since it was asked: rule memo-frozen \\(policy [0-9a-f]+\\) now denies message.append: memo is frozen\\.$`,
      ),
    );
    const doc = await thread(id);
    expect(doc.message_seq).toBe(0);
    expect(doc.approvals![0]).toMatchObject({ status: 'approved', outcome: { applied: false } });
    expect(doc.outbox.filter((e) => e.type === 'approval.decided')).toHaveLength(1);
    const dm = await approverDm(approvalId, U.lead);
    await waitUntil(
      async () => dmText(slack, dm.channel, dm.ts).includes('memo is frozen') || undefined,
      'the approver DM to say why nothing was applied',
    );
  });

  test('a held create approved after the policy changed to deny is rejected: the sender is told, nothing is delivered', async () => {
    const { threadId, approvalId } = await held('recipient@acme', 'Create, then policy change');
    const changed = denying(
      '  - { id: recipient-away, match: { action: handoff.create, recipient: { handle: recipient@acme } }, effect: deny, reason: recipient is away }\n',
    );
    expect((await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: changed })).status).toBe(200);
    const answer = await relay.rest('POST', `/approvals/${approvalId}/approve`, keys.lead, {});
    expect(answer.body.message).toMatch(
      /is approved, but nothing was applied: the policy changed since it was asked: rule recipient-away .* now denies handoff\.create: recipient is away; sender@acme is told why and nothing is delivered to recipient@acme\.$/,
    );
    const doc = await thread(threadId);
    expect(doc).toMatchObject({ status: 'rejected', hidden_from_recipient: true, slack: null });
    expect(doc.reject_reason).toMatch(/rule recipient-away .* now denies handoff\.create: recipient is away$/);
    const senderDm = await waitUntil(async () => {
      const d = (await thread(threadId)).slack_sender;
      return d && dmText(slack, d.channel, d.ts).includes('recipient is away') ? d : undefined;
    }, 'the sender told why');
    expect(senderDm).toBeDefined();
    expect((await relay.rpc(keys.recipient, 'tasks/get', { task_id: threadId })).body.error).toMatchObject({
      code: -32006,
    });
  });
});

describe('a held create to a role with several candidates', () => {
  test('held unseen by the candidates; approved, it opens unclaimed with Claim cards, and a candidate claims it', async () => {
    const { body } = await relay.rpc(keys.sender, 'message/send', {
      recipient: 'role:dba',
      intent: 'inform',
      message: text('Vacuum the orders table'),
    });
    expect(body.result).toMatchObject({
      status: { state: 'awaiting_approval' },
      recipient: 'role:dba',
      approval: { approvers: ['lead@acme'], rule_id: 'dba-work-needs-lead' },
    });
    const threadId = body.result.task_id as string;
    const approvalId = body.result.approval.approval_id as string;
    expect(await thread(threadId)).toMatchObject({
      status: 'awaiting_approval',
      hidden_from_recipient: true,
      to: 'role:dba',
      candidates: ['dba1@acme', 'dba2@acme'],
    });
    for (const key of [keys.dba1, keys.dba2]) {
      expect(
        (await relay.rpc(key, 'tasks/list', {})).body.result.items.map((i: any) => i.task_id ?? i.thread_id),
      ).not.toContain(threadId);
      expect(
        (await relay.rpc(key, 'tasks/update', { task_id: threadId, transition: 'claim' })).body.error,
      ).toMatchObject({ code: -32006 });
      // A candidate is no participant of it yet (as for any thread not theirs): nothing of it is shown.
      expect((await relay.rpc(key, 'tasks/get', { task_id: threadId })).body.error).toMatchObject({ code: -32005 });
    }
    expect((await thread(threadId)).slack_claims ?? {}).toEqual({});

    const approve = click(await approverDm(approvalId, U.lead), U.lead, 'approval_approve');
    await press(relay, approve);
    expect(await waitForExplanation(slack, approve.responseUrl!, /^Approved/)).toBe(
      'Approved: the handoff from sender@acme is open to role:dba (dba1@acme, dba2@acme); the first to claim it gets it.',
    );
    const open = await thread(threadId);
    expect(open).toMatchObject({ status: 'unclaimed', hidden_from_recipient: false });
    expect(open.status_history.map((h) => h.status)).toEqual(['awaiting_approval', 'unclaimed']);
    await waitUntil(
      async () =>
        ((await thread(threadId)).slack_claims?.[U.dba1] && (await thread(threadId)).slack_claims?.[U.dba2]) ||
        undefined,
      'the Claim cards in both DMs',
    );
    expect(
      (await relay.rpc(keys.dba1, 'tasks/list', {})).body.result.items.map((i: any) => i.task_id ?? i.thread_id),
    ).toContain(threadId);
    const claimed = await relay.rpc(keys.dba2, 'tasks/update', { task_id: threadId, transition: 'claim' });
    expect(claimed.body.error).toBeUndefined();
    expect(await thread(threadId)).toMatchObject({ status: 'pending', to: 'dba2@acme', claimed_by: 'dba2@acme' });
  });
});

describe('the built CLI', () => {
  const run = promisify(execFile);
  const cli = (...args: string[]) =>
    run('node', [join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js'), 'approvals', ...args], {
      env: { PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_ADMIN_KEY: relay.adminKey },
    }).then(
      ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  test('approvals list | approve ID --as | reject ID --as --reason, and the refusals in words', async () => {
    const a = await held('recipient@acme', 'From the CLI, approved');
    const b = await held('recipient@acme', 'From the CLI, rejected');
    const listed = await cli('list', '--status', 'pending');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(
      `${a.approvalId}  pending  handoff.create by sender@acme  approvers: lead@acme (0/1)`,
    );
    expect(listed.stdout).toContain(b.approvalId);

    const notYours = await cli('approve', a.approvalId, '--as', 'boss@acme');
    expect(notYours).toMatchObject({
      code: 1,
      stderr: `handoff-relay: the relay refused: boss@acme is not an approver of ${a.approvalId} (approvers: lead@acme). Nothing was changed.\n`,
    });
    const noAs = await cli('approve', a.approvalId);
    expect(noAs.stderr).toContain('approvals approve needs --as WHO');
    const noReason = await cli('reject', b.approvalId, '--as', 'lead@acme');
    expect(noReason.stderr).toContain('approvals reject needs --reason TEXT');
    expect((await thread(a.threadId)).status).toBe('awaiting_approval');

    const approved = await cli('approve', a.approvalId, '--as', 'lead@acme');
    expect(approved.stdout).toBe(
      `Approved: the handoff from sender@acme is delivered to recipient@acme. (Recorded as decided by the admin key on behalf of lead@acme.)\n${a.approvalId}: approved\n`,
    );
    // The admin key acting for an approver says so: in the vote, the approval's history, and the policy audit.
    const decided = (await thread(a.threadId)).approvals![0]!;
    expect(decided.approvals).toEqual([expect.objectContaining({ by: 'lead@acme', via: 'api', admin: true })]);
    expect(decided.history).toContainEqual(
      expect.objectContaining({ what: 'approved_by', by: 'lead@acme', note: 'by the admin key on their behalf' }),
    );
    const audit = await relay.rest('GET', '/admin/policy/audit', relay.adminKey);
    expect(audit.body.refusals).toContainEqual(
      expect.objectContaining({
        outcome: 'admin_on_behalf',
        actor: 'admin',
        thread_id: a.threadId,
        reason: `the admin key approved ${a.approvalId} on behalf of approver lead@acme`,
      }),
    );
    const leadDm = await approverDm(a.approvalId, U.lead);
    await waitUntil(
      async () => dmText(slack, leadDm.channel, leadDm.ts).includes('(by the admin key on their behalf)') || undefined,
      'the approver DM to say the admin key decided',
    );
    const rejected = await cli('reject', b.approvalId, '--as', U.lead, '--reason', 'Wrong team');
    expect(rejected.stdout).toBe(
      `Rejected: sender@acme is told why; nothing is delivered to recipient@acme. (Recorded as decided by the admin key on behalf of lead@acme.)\n${b.approvalId}: rejected\n`,
    );
    expect((await thread(a.threadId)).status).toBe('pending');
    expect(await thread(b.threadId)).toMatchObject({ status: 'rejected', reject_reason: 'Wrong team' });
    const after = await cli('list', '--approver', 'lead@acme');
    expect(after.stdout).toContain(
      `${b.approvalId}  rejected  handoff.create by sender@acme  approvers: lead@acme (0/1)  Wrong team`,
    );
  });
});

describe('timers (the injected clock)', () => {
  test('remind → escalate → on_timeout: each an explicit, recorded and notified outcome', async () => {
    const { threadId, approvalId } = await held('timers@acme', 'Needs someone awake');
    const dm = await approverDm(approvalId, U.lead);
    clock.advance(11 * 60_000);
    await waitUntil(
      async () => (await thread(threadId)).approvals![0]!.history.some((h) => h.what === 'reminded') || undefined,
      'the reminder',
    );
    const reminder = await waitUntil(
      async () => (await thread(threadId)).slack_approvals?.[`approval:${approvalId}:${U.lead}:remind1`],
      'the reminder reply',
    );
    expect(slack.messages.get(dm.channel)?.find((m) => m.ts === reminder.ts)?.thread_ts).toBe(dm.ts);

    clock.advance(50 * 60_000);
    await waitUntil(
      async () => ((await thread(threadId)).approvals![0]!.step === 1 ? true : undefined),
      'the escalation',
    );
    const escalated = (await thread(threadId)).approvals![0]!;
    expect(escalated.approvers.map((a) => a.label)).toEqual(['lead@acme', 'boss@acme']);
    expect(escalated.history.map((h) => h.what)).toEqual(['requested', 'reminded', 'escalated']);
    await approverDm(approvalId, U.boss);
    expect((await thread(threadId)).status).toBe('awaiting_approval');

    clock.advance(61 * 60_000);
    const done = await waitUntil(async () => {
      const doc = await thread(threadId);
      return doc.status === 'rejected' ? doc : undefined;
    }, 'the timeout');
    expect(done.reject_reason).toBe(
      'no approval within 1h after escalation (rule slow-lead-escalates, on_timeout: deny)',
    );
    expect(done.approvals![0]).toMatchObject({ status: 'timed_out', decided_by: 'policy' });
    expect(done.status_history.at(-1)).toMatchObject({ status: 'rejected', by: 'policy' });
    await waitUntil(
      async () => dmText(slack, dm.channel, dm.ts).includes('Timed out') || undefined,
      'the approver DM to show the timeout',
    );
    const senderDm = await waitUntil(async () => {
      const d = (await thread(threadId)).slack_sender;
      return d && dmText(slack, d.channel, d.ts).includes('Why it was rejected') ? d : undefined;
    }, 'the sender told');
    expect(dmText(slack, senderDm.channel, senderDm.ts)).toContain('no approval within 1h');
  });
});
