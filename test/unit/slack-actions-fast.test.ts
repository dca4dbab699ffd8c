// Every button listener registerListeners ties to an action_id, called as Bolt calls it with the fake Slack's
// block_actions payload: it acks first, calls its use case with the click's arguments, answers through the client or
// respond, and explains a refusal in words.
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { ACTION_IDS } from '../../bot/blocks/handoff-dm';
import { APPROVAL_ACTION_IDS, approvalButtonValue } from '../../bot/blocks/approval-dm';
import { CLAIM_ACTION_IDS, claimButtonValue } from '../../bot/blocks/claim-card';
import { TIMER_ACTION_IDS } from '../../bot/blocks/timer-action-ids';
import { controlValue } from '../../bot/blocks/timer-notices';
import { WEB_INBOX_ACTION_IDS } from '../../bot/blocks/web-inbox';
import { SLACK_ACCEPT_JOB } from '../../bot/delivery/slack-accept-job';
import { VERIFYING_NOTICE } from '../../bot/delivery/dm-redraw';
import { registerActions } from '../../bot/listeners/actions';
import { CALLBACK_IDS } from '../../bot/views/transition-modals';
import { DIGEST_ACTION_IDS, HOME_ACTION_IDS } from '../../bot/views/home';
import { APPROVAL_REJECT_CALLBACK_ID } from '../../bot/views/approval-reject-modal';
import { REASSIGN_VIEW } from '../../bot/blocks/timer-action-ids';
import type { SlackAppDeps } from '../../bot/slack-app';
import { agent, NOW, pendingApproval as approval } from '../fakes/use-case-ports';
import { DM, recipient, sender, SlackListenerKit, storedThread as thread, STRANGER } from '../fakes/slack-listener-kit';

let kit: SlackListenerKit;
beforeEach(() => {
  kit = new SlackListenerKit();
});

// Slack wants the ack within 3 seconds: every button acks once, before anything else it does.
afterEach(() => {
  if (kit.steps.length === 0) return;
  expect(kit.whats()[0]).toBe('ack');
  expect(kit.calls('ack')).toEqual([[]]);
});

/** Presses `actionId` on a DM of `doc` (as the recipient unless `user` says). */
async function press(actionId: string, doc: ThreadDoc, over: { user?: string; value?: string } = {}) {
  await kit.insert(doc);
  await kit.listener('action', actionId)(kit.click({ actionId, value: controlValue(doc), ...over }));
}

const covered = new Set<string>();
function describeAction(actionId: string, tests: () => void): void {
  covered.add(actionId);
  describe(actionId, tests);
}

test('every action_id registerActions ties to a handler has a fast test here', () => {
  const registered = new SlackListenerKit().registered().filter((k) => k.startsWith('action:'));
  const viaRegisterActions: string[] = [];
  registerActions(
    { action: (id: string) => void viaRegisterActions.push(`action:${id}`) } as never,
    {} as Parameters<typeof registerActions>[1],
  );
  expect(registered.sort()).toEqual(viaRegisterActions.sort());
  expect(registered.map((k) => k.slice('action:'.length)).sort()).toEqual([...covered].sort());
});

describeAction(ACTION_IDS.accept, () => {
  test('acks, shows "Verifying acceptance…" on the DM and queues the accept job for the clicker', async () => {
    kit.script('verifyJobs.add', async () => undefined);
    const doc = thread('pending');
    await press(ACTION_IDS.accept, doc);
    expect(kit.whats()[0]).toBe('ack');
    expect(kit.calls('chat.update')).toEqual([[expect.objectContaining({ ...DM, text: expect.any(String) })]]);
    expect(JSON.stringify(kit.calls('chat.update'))).toContain(VERIFYING_NOTICE);
    const [[name, job, jobId]] = kit.calls('verifyJobs.add');
    expect([name, job]).toEqual([
      SLACK_ACCEPT_JOB,
      {
        thread_id: doc._id,
        slack_user: recipient.slack_user_id,
        shown_status: 'pending',
        response_url: 'https://hooks.slack.test/actions/1',
      },
    ]);
    expect(jobId).toMatch(new RegExp(`^slack-accept-${doc._id}-`));
  });

  test('refused: an unlinked clicker is told so and nothing is queued', async () => {
    await press(ACTION_IDS.accept, thread('pending'), { user: STRANGER });
    expect(kit.told()).toEqual([expect.stringContaining('Your Slack account is not linked')]);
    expect(kit.calls('verifyJobs.add')).toEqual([]);
  });

  test('refused: a queue that is down is explained, the DM drawn again without the notice', async () => {
    kit.script('verifyJobs.add', async () => {
      throw new Error('Redis is down');
    });
    await press(ACTION_IDS.accept, thread('pending'));
    expect(kit.calls('chat.update')).toHaveLength(2);
    expect(JSON.stringify(kit.calls('chat.update')[1])).not.toContain(VERIFYING_NOTICE);
    expect(kit.told()).toEqual([
      'handoff-relay could not start verifying your acceptance right now; press Accept again in a moment. Nothing was changed.',
    ]);
  });
});

describe.each([
  ['decline', ACTION_IDS.decline, 'pending'],
  ['complete', ACTION_IDS.complete, 'accepted'],
  ['reply', ACTION_IDS.reply, 'pending'],
] as const)('%s button', (kind, actionId, status) => {
  covered.add(actionId);
  test(`${actionId}: acks and opens the ${kind} modal with the click's trigger`, async () => {
    const doc = thread(status);
    await press(actionId, doc);
    expect(kit.whats()[0]).toBe('ack');
    const [[open]] = kit.calls('views.open') as [[any]];
    expect(open).toMatchObject({ trigger_id: 'trigger-1', view: { callback_id: CALLBACK_IDS[kind] } });
    expect(JSON.parse(open.view.private_metadata)).toMatchObject({ t: doc._id, s: status });
  });

  test(`${actionId} refused: a stranger to the thread is told who may, and no modal opens`, async () => {
    kit.agents.push({ ...agent('qa@acme'), slack_user_id: 'U0QA' });
    await press(actionId, thread(status), { user: 'U0QA' });
    expect(kit.told()).toEqual([
      kind === 'reply'
        ? `Only ${sender.handle} and ${recipient.handle} can reply on this handoff. Nothing was changed.`
        : `Only the recipient (${recipient.handle}) can ${kind} this handoff. Nothing was changed.`,
    ]);
  });
});

describeAction(ACTION_IDS.handToAgent, () => {
  test('on an accepted handoff, asks runs.request for the recipient', async () => {
    kit.script('runs.request', async () => ({ run_id: 'r1' }));
    const doc = thread('accepted');
    await press(ACTION_IDS.handToAgent, doc);
    expect(kit.whats()[0]).toBe('ack');
    expect(kit.calls('runs.request')).toEqual([
      [expect.objectContaining({ handle: recipient.handle }), doc._id, 'slack'],
    ]);
    expect(kit.told()).toEqual([]);
  });

  test('refused: the relay’s refusal is told in its words', async () => {
    kit.script('runs.request', async () => {
      throw new RelayError('conflict', 'A run of this handoff is already queued');
    });
    await press(ACTION_IDS.handToAgent, thread('accepted'));
    expect(kit.told()).toEqual([
      'Not handed to your agent: A run of this handoff is already queued. Nothing was changed.',
    ]);
  });
});

describeAction(ACTION_IDS.stopAgent, () => {
  const run = {
    id: 'r1',
    status: 'running' as const,
    runner: 'laptop',
    queued_at: NOW,
    started_at: NOW,
    last_update_at: null,
    last_line: null,
    stop_requested: false,
    finished_at: null,
  };

  test('asks runs.stop for the thread’s run', async () => {
    kit.script('runs.stop', async () => ({}));
    await press(ACTION_IDS.stopAgent, thread('accepted', { run }));
    expect(kit.calls('runs.stop')).toEqual([[expect.objectContaining({ handle: recipient.handle }), 'r1', 'slack']]);
  });

  test('refused: no agent is running it', async () => {
    await press(ACTION_IDS.stopAgent, thread('accepted', { run: { ...run, status: 'succeeded' as never } }));
    expect(kit.told()).toEqual(['Your agent is not running this handoff any more; nothing was changed.']);
    expect(kit.calls('runs.stop')).toEqual([]);
  });
});

describe.each([ACTION_IDS.openInbox, WEB_INBOX_ACTION_IDS.signIn, TIMER_ACTION_IDS.escalationOpen])(
  'link button %s',
  (actionId) => {
    covered.add(actionId);
    test('only acks (the link opens in the browser)', async () => {
      await press(actionId, thread('pending'));
      expect(kit.whats()).toEqual(['ack']);
    });
  },
);

describeAction(WEB_INBOX_ACTION_IDS.open, () => {
  test('makes a one-time sign-in link for the clicker and shows it in a modal', async () => {
    kit.script('webSessions.issueLink', async () => ({ url: 'https://relay.test/auth/once/abc' }));
    await press(WEB_INBOX_ACTION_IDS.open, thread('pending'));
    expect(kit.calls('webSessions.issueLink')).toEqual([[recipient.handle, 'slack']]);
    expect(JSON.stringify(kit.calls('views.open'))).toContain('https://relay.test/auth/once/abc');
  });

  test('refused: an unlinked clicker gets the modal that says how to link, and no link is made', async () => {
    await press(WEB_INBOX_ACTION_IDS.open, thread('pending'), { user: STRANGER });
    expect(kit.calls('webSessions.issueLink')).toEqual([]);
    expect(JSON.stringify(kit.calls('views.open'))).toContain('/handoff link');
  });
});

describeAction(HOME_ACTION_IDS.page, () => {
  test('publishes the Home tab again at the page the button carries', async () => {
    kit.script('reads.listThreads', async () => ({ items: [], next_cursor: null }));
    await press(HOME_ACTION_IDS.page, thread('pending'), { value: JSON.stringify({ w: 'c2' }) });
    expect(kit.calls('reads.listThreads')).toEqual([
      [
        expect.objectContaining({ handle: recipient.handle }),
        expect.objectContaining({ role: 'recipient', cursor: 'c2' }),
      ],
      [expect.objectContaining({ handle: recipient.handle }), expect.objectContaining({ role: 'sender' })],
    ]);
    expect(kit.calls('views.publish')).toEqual([[expect.objectContaining({ user_id: recipient.slack_user_id })]]);
  });

  test('refused: an unlinked user is shown the tab that explains /handoff link', async () => {
    await press(HOME_ACTION_IDS.page, thread('pending'), { user: STRANGER, value: '{}' });
    expect(kit.calls('reads.listThreads')).toEqual([]);
    expect(JSON.stringify(kit.calls('views.publish'))).toContain('/handoff link');
  });
});

async function pressApproval(actionId: string, user: string) {
  const doc = thread('awaiting_approval');
  const record = approval(doc);
  kit.agents.push({ ...agent('lead@acme'), slack_user_id: 'U0LEAD' });
  kit.script('approvalRecords.get', async () => ({ thread: doc, record }));
  await kit.listener(
    'action',
    actionId,
  )(kit.click({ actionId, value: approvalButtonValue(record), user, blockId: 'approval_actions' }));
  return record;
}

describeAction(APPROVAL_ACTION_IDS.approve, () => {
  test('an approver’s vote goes to approvalDecisions.decide, and its answer is told', async () => {
    kit.script('approvalDecisions.decide', async () => ({
      changed: true,
      message: 'Approved: the handoff is delivered.',
    }));
    const record = await pressApproval(APPROVAL_ACTION_IDS.approve, 'U0LEAD');
    expect(kit.whats()[0]).toBe('ack');
    expect(kit.calls('approvalDecisions.decide')).toEqual([
      [record.id, { slack_user_id: 'U0LEAD', handle: 'lead@acme', label: 'lead@acme' }, 'approve', 'slack'],
    ]);
    expect(kit.told()).toEqual(['Approved: the handoff is delivered.']);
  });

  test('refused: someone who is not an approver is told who is', async () => {
    await pressApproval(APPROVAL_ACTION_IDS.approve, recipient.slack_user_id!);
    expect(kit.told()).toEqual(['Only the approvers of this request (lead@acme) can decide it. Nothing was changed.']);
    expect(kit.calls('approvalDecisions.decide')).toEqual([]);
  });
});

describeAction(APPROVAL_ACTION_IDS.reject, () => {
  test('opens the reject modal asking why', async () => {
    await pressApproval(APPROVAL_ACTION_IDS.reject, 'U0LEAD');
    expect(kit.calls('views.open')).toEqual([
      [
        expect.objectContaining({
          trigger_id: 'trigger-1',
          view: expect.objectContaining({ callback_id: APPROVAL_REJECT_CALLBACK_ID }),
        }),
      ],
    ]);
  });

  test('refused: a button value this relay never made', async () => {
    await kit.listener(
      'action',
      APPROVAL_ACTION_IDS.reject,
    )(kit.click({ actionId: APPROVAL_ACTION_IDS.reject, value: '{"a":"x"}' }));
    expect(kit.told()).toEqual(['This button is not one handoff-relay recognises; nothing was changed.']);
  });
});

describeAction(CLAIM_ACTION_IDS.claim, () => {
  const unclaimed = () => thread('unclaimed', { to: 'role:frontend', candidates: [recipient.handle] } as never);

  test('claims through claims.claim for the clicker and tells them it is theirs', async () => {
    kit.script('claims.claim', async () => ({}));
    const doc = unclaimed();
    await press(CLAIM_ACTION_IDS.claim, doc, { value: claimButtonValue(doc) });
    expect(kit.calls('claims.claim')).toEqual([
      [expect.objectContaining({ handle: recipient.handle }), doc._id, 'slack'],
    ]);
    expect(kit.told()).toEqual([
      ':raised_hand: You claimed this handoff: it is yours now, and its DM with Accept and Decline is on its way.',
    ]);
  });

  test('refused: someone claimed it first, and the clicker is told who', async () => {
    const doc = unclaimed();
    kit.script('claims.claim', async () => {
      await kit.threads.writeThread(doc._id, (d) => ({ ...d, claimed_by: 'other@acme', claimed_at: NOW }));
      throw new RelayError('invalid_transition', 'This handoff was claimed already');
    });
    await press(CLAIM_ACTION_IDS.claim, doc, { value: claimButtonValue(doc) });
    expect(kit.told()).toEqual([
      expect.stringMatching(/^Already claimed by other@acme <!date\^\d+\^.*Nothing was changed\.$/),
    ]);
  });
});

describe.each([
  [DIGEST_ACTION_IDS.off, true],
  [DIGEST_ACTION_IDS.on, false],
])('digest button %s', (actionId, off) => {
  covered.add(actionId);
  test('stores the clicker’s choice and redraws their Home tab', async () => {
    const set: unknown[] = [];
    const digest = {
      prefs: { set: async (...args: unknown[]) => void set.push(args), isOff: async () => off },
      at: () => '09:30',
    };
    kit = new SlackListenerKit({ digest } as unknown as Partial<SlackAppDeps>);
    kit.script('reads.listThreads', async () => ({ items: [], next_cursor: null }));
    await press(actionId, thread('pending'), { value: '' });
    expect(set).toEqual([[recipient.handle, off, expect.any(Date)]]);
    expect(kit.calls('views.publish')).toHaveLength(1);
    expect(kit.calls('respond')).toHaveLength(1);
  });

  test('refused: where the digest is off on this relay it says so', async () => {
    await press(actionId, thread('pending'), { value: '' });
    expect(kit.told()).toEqual(['The daily digest is off on this relay (RELAY_DIGEST_AT=off); nothing was changed.']);
  });
});

describe.each([
  [TIMER_ACTION_IDS.snooze1h, '1h'],
  [TIMER_ACTION_IDS.snoozeTomorrow, 'tomorrow'],
  [TIMER_ACTION_IDS.snoozeWeek, 'week'],
])('snooze button %s', (actionId, choice) => {
  covered.add(actionId);
  test(`asks timers.snooze for ${choice} and says when the next reminder comes`, async () => {
    kit.script('timers.snooze', async () => new Date('2026-03-02T11:00:00Z'));
    const doc = thread('pending');
    await press(actionId, doc);
    expect(kit.calls('timers.snooze')).toEqual([
      [expect.objectContaining({ handle: recipient.handle }), doc._id, choice, 'slack'],
    ]);
    expect(kit.told()).toEqual([expect.stringMatching(/^Snoozed: the next reminder comes <!date\^1772449200\^/)]);
  });

  test('refused: the relay’s reason, in words', async () => {
    kit.script('timers.snooze', async () => {
      throw new RelayError('invalid_transition', 'This handoff has no reminder left to snooze');
    });
    await press(actionId, thread('pending'));
    expect(kit.told()).toEqual(['This handoff has no reminder left to snooze. Nothing was changed.']);
  });
});

describeAction(TIMER_ACTION_IDS.reassign, () => {
  test('the sender gets the reassign modal', async () => {
    await press(TIMER_ACTION_IDS.reassign, thread('pending'), { user: sender.slack_user_id! });
    expect(kit.calls('views.open')).toEqual([
      [expect.objectContaining({ view: expect.objectContaining({ callback_id: REASSIGN_VIEW.callbackId }) })],
    ]);
  });

  test('refused: the recipient may not reassign', async () => {
    await press(TIMER_ACTION_IDS.reassign, thread('pending'));
    expect(kit.told()).toEqual([`Only the sender (${sender.handle}) can reassign this handoff. Nothing was changed.`]);
  });
});

describeAction(TIMER_ACTION_IDS.resend, () => {
  test('the sender of an expired handoff resends it through reassignments.resend', async () => {
    kit.script('reassignments.resend', async () => ({ task_id: 'new-thread', recipient: recipient.handle }));
    const doc = thread('expired');
    await press(TIMER_ACTION_IDS.resend, doc, { user: sender.slack_user_id! });
    expect(kit.calls('reassignments.resend')).toEqual([
      [expect.objectContaining({ handle: sender.handle }), doc._id, 'slack'],
    ]);
    expect(kit.told()).toEqual([`Resent to ${recipient.handle} as a new handoff (thread new-thread).`]);
  });

  test('refused: a pending handoff is not resent', async () => {
    await press(TIMER_ACTION_IDS.resend, thread('pending'), { user: sender.slack_user_id! });
    expect(kit.told()).toEqual(['This handoff is pending; that button does not apply any more. Nothing was changed.']);
    expect(kit.calls('reassignments.resend')).toEqual([]);
  });
});

describe('escalation buttons', () => {
  const lead = { ...agent('lead@acme'), name: 'Lena', slack_user_id: 'U0LEAD' };
  const escalated = () =>
    thread('pending', { timers: { fired: {}, escalated_to: { kind: 'lead', handle: lead.handle } } });

  describeAction(TIMER_ACTION_IDS.escalationNudge, () => {
    test('the lead’s nudge is posted under the recipient’s DM, and the lead is told', async () => {
      kit.agents.push(lead);
      await press(TIMER_ACTION_IDS.escalationNudge, escalated(), { user: 'U0LEAD' });
      expect(kit.calls('chat.postMessage')).toEqual([
        [
          expect.objectContaining({
            channel: DM.channel,
            thread_ts: DM.ts,
            text: expect.stringContaining('Lena nudges you'),
          }),
        ],
      ]);
      expect(kit.told()).toEqual([
        `Nudged <@${recipient.slack_user_id}>: a reminder from you is under their DM of this handoff.`,
      ]);
    });

    test('refused: only the lead it was escalated to', async () => {
      await press(TIMER_ACTION_IDS.escalationNudge, escalated(), { user: sender.slack_user_id! });
      expect(kit.told()).toEqual([
        'Only the lead this handoff was escalated to (lead@acme) can nudge the recipient of it from here. Nothing was changed.',
      ]);
    });
  });

  describeAction(TIMER_ACTION_IDS.escalationReassign, () => {
    test('the lead gets the reassign modal', async () => {
      kit.agents.push(lead);
      await press(TIMER_ACTION_IDS.escalationReassign, escalated(), { user: 'U0LEAD' });
      expect(kit.calls('views.open')).toHaveLength(1);
    });

    test('refused: the recipient is not the lead', async () => {
      await press(TIMER_ACTION_IDS.escalationReassign, escalated());
      expect(kit.told()[0]).toMatch(/^Only the lead this handoff was escalated to \(lead@acme\) can reassign it/);
      expect(kit.calls('views.open')).toEqual([]);
    });
  });
});
