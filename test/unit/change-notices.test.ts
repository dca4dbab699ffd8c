// The notice a change posts under the other party's DM, pure: who is told, and the words they read.
import type { ApprovalRecord } from '../../relay-core/domain/approval';
import type { OutboxEvent, ThreadDoc } from '../../relay-core/domain/documents';
import { changeNotices } from '../../bot/blocks/change-notices';
import { alice, at, bob, expectWithinSlackLimits, HOSTILE, thread } from './handoff-dm-fixtures';

const event = (type: OutboxEvent['type'], by: string, minutes = 10) => ({ id: 'e1', type, by, at: at(minutes) });
const notices = (doc: ThreadDoc, e: ReturnType<typeof event>) =>
  changeNotices({
    thread: doc,
    event: e,
    sender: alice,
    recipient: bob,
    people: new Map(),
    inboxUrl: (audience) => `https://relay.example.com/inbox/t?as=${audience}`,
  });
const read = (n: ReturnType<typeof notices>) =>
  n.map((x) => [x.audience, x.message.blocks.map((b: any) => b.text?.text ?? b.elements?.[0]?.text).join('\n')]);

function held(over: Partial<ApprovalRecord>): ApprovalRecord {
  return {
    id: 't_a1',
    action: 'handoff.accept',
    actor: 'bob@acme',
    via: 'slack',
    args: {},
    state_version: 1,
    rule_id: 'r',
    policy_version: 'v',
    binding: 'b',
    approvers: [
      { label: 'lead@acme', handle: 'lead@acme', slack_user_id: 'U0LEAD', source: 'recipient_lead', step: 0 },
    ],
    quorum: 1,
    approvals: [],
    status: 'rejected',
    reason: 'Not before the freeze ends',
    decided_by: 'lead@acme',
    decided_at: at(10),
    outcome: null,
    created_at: at(1),
    remind_after_ms: null,
    remind_at: null,
    timeout_ms: 1,
    deadline: at(100),
    on_timeout: 'deny',
    escalate_to: [],
    step: 0,
    history: [{ at: at(10), what: 'rejected_by', by: 'lead@acme' }],
    ...over,
  };
}

test('declined: the sender reads who, the title and the reason; the decliner is told nothing', () => {
  const doc = thread({
    summary: 'Rotate the staging keys\nmore detail',
    status: 'declined',
    decline_reason: 'Ask SRE',
  });
  expect(read(notices(doc, event('thread.declined', 'bob@acme')))).toEqual([
    ['sender', ':no_entry_sign: <@U0BOB> declined your handoff “Rotate the staging keys”:\n>Ask SRE'],
  ]);
  // Declined by the sender themselves (a self-handoff): nobody else to tell.
  expect(notices(doc, event('thread.declined', 'alice@acme'))).toEqual([]);
});

test('completed by the recipient’s agent: the notice names the run, with the result and the inbox link', () => {
  const doc = thread({
    summary: 'Fix the flaky test',
    status: 'completed',
    completed_summary: 'All green',
    run: { id: 'r1', status: 'succeeded', runner: 'bob-laptop' } as ThreadDoc['run'],
  });
  expect(read(notices(doc, event('thread.completed', 'bob@acme')))).toEqual([
    [
      'sender',
      ":tada: Your handoff “Fix the flaky test” was completed by <@U0BOB>'s agent on `bob-laptop`.\n*Result:* All green\n<https://relay.example.com/inbox/t?as=sender|View it in the inbox>",
    ],
  ]);
});

test('a held accept rejected or timed out: its actor hears how it ended, in words', () => {
  const rejected = thread({ summary: 'Raise the pool size', approvals: [held({})] });
  expect(read(notices(rejected, event('approval.decided', 'lead@acme')))).toEqual([
    [
      'recipient',
      ':no_entry: Your accept of “Raise the pool size” was rejected by <@U0LEAD>; nothing was changed.\n>Not before the freeze ends',
    ],
  ]);
  const timedOut = thread({
    summary: 'Raise the pool size',
    approvals: [held({ status: 'timed_out', decided_by: null, history: [{ at: at(10), what: 'timed_out' }] })],
  });
  expect(read(notices(timedOut, event('approval.decided', 'relay')))).toEqual([
    ['recipient', ':hourglass: Your accept of “Raise the pool size” was not approved in time; nothing was changed.'],
  ]);
  // An event at another time concluded no approval: no notice.
  expect(notices(rejected, event('approval.decided', 'lead@acme', 11))).toEqual([]);
});

test('a message, a reminder, a run’s progress: no notice (the message is its own reply)', () => {
  for (const type of ['thread.message', 'thread.reminded', 'run.started'] as const)
    expect(notices(thread(), event(type, 'bob@acme'))).toEqual([]);
});

test('teammate text is escaped and the notice stays within Slack’s limits', () => {
  const doc = thread({ summary: HOSTILE, status: 'declined', decline_reason: HOSTILE.repeat(20) });
  const [notice] = notices(doc, event('thread.declined', 'bob@acme'));
  expect(JSON.stringify(notice!.message)).not.toContain('<!channel>');
  expectWithinSlackLimits(notice!.message);
});
