// Every modal submission registerListeners ties to a callback_id, called as Bolt calls it with the fake Slack's
// view_submission payload and the private_metadata the app's own modal carries: the use case is called with the form's
// arguments, the ack closes the modal (or carries the problem on its field), and a refusal is told in words.
import { RelayError } from '../../relay-core/domain/errors';
import { registerViews } from '../../bot/listeners/views';
import {
  approvalRejectModal,
  APPROVAL_REJECT_CALLBACK_ID,
  APPROVAL_REJECT_INPUT,
} from '../../bot/views/approval-reject-modal';
import { NEW_HANDOFF_CALLBACK_ID, NEW_HANDOFF_FIELDS as F } from '../../bot/views/new-handoff-modal';
import { reassignModal } from '../../bot/views/reassign-modal';
import { REASSIGN_VIEW } from '../../bot/blocks/timer-action-ids';
import { CALLBACK_IDS, INPUTS, TRANSITION_MODALS } from '../../bot/views/transition-modals';
import { NOW, pendingApproval } from '../fakes/use-case-ports';
import { recipient, sender, SlackListenerKit, storedThread, STRANGER } from '../fakes/slack-listener-kit';

let kit: SlackListenerKit;
beforeEach(() => {
  kit = new SlackListenerKit();
});

// A submission is answered by its ack alone (Slack closes the modal on an empty one): exactly one, always.
afterEach(() => {
  if (kit.steps.length > 0) expect(kit.calls('ack')).toHaveLength(1);
});

const covered = new Set<string>();
function describeView(callbackId: string, tests: () => void): void {
  covered.add(callbackId);
  describe(callbackId, tests);
}

/** The errors the ack put on the form's fields (none: it closed the modal). */
const formErrors = () => (kit.calls('ack')[0]?.[0] as { errors?: Record<string, string> } | undefined)?.errors;
const text = (value: string) => ({ type: 'plain_text_input', value });

test('every callback_id registerViews ties to a handler has a fast test here', () => {
  const registered = new SlackListenerKit()
    .registered()
    .filter((k) => k.startsWith('view:'))
    .map((k) => k.slice('view:'.length));
  const viaRegisterViews: string[] = [];
  registerViews({ view: (id: string) => void viaRegisterViews.push(id) } as never, {} as never);
  expect(registered.sort()).toEqual(viaRegisterViews.sort());
  expect(registered).toEqual([...covered].sort());
});

describeView(NEW_HANDOFF_CALLBACK_ID, () => {
  const form = (over: Record<string, unknown> = {}) => ({
    [F.recipient]: { [F.recipient]: { type: 'users_select', selected_user: sender.slack_user_id } },
    [F.intent]: { [F.intent]: { type: 'static_select', selected_option: { value: 'ask_question' } } },
    [F.summary]: { [F.summary]: text('The web client pages now') },
    [F.question]: { [F.question]: text('Anything else to page?') },
    ...over,
  });
  const submit = (values: Record<string, unknown>) =>
    kit.listener(
      'view',
      NEW_HANDOFF_CALLBACK_ID,
    )(kit.submission({ callbackId: NEW_HANDOFF_CALLBACK_ID, values: values as never }));

  test('creates the handoff for the picked teammate under the view id, closes the modal and confirms in a DM', async () => {
    kit.script('creates.create', async () => ({
      task_id: 't1',
      status: { state: 'pending' },
      created_at: NOW.toISOString(),
      inbox_url: 'https://relay.test/inbox/t1',
      recipient: sender.handle,
    }));
    await submit(form());
    expect(kit.calls('creates.create')).toEqual([
      [
        expect.objectContaining({ handle: recipient.handle }),
        expect.objectContaining({
          to: sender.handle,
          intent: 'ask_question',
          summary: 'The web client pages now',
          question: 'Anything else to page?',
          idempotency_key: 'slack-view:V0MODAL',
        }),
        'slack',
      ],
    ]);
    expect(kit.calls('ack')).toEqual([[]]);
    expect(kit.calls('chat.postMessage')).toEqual([
      [
        {
          channel: recipient.slack_user_id,
          text: ':outbox_tray: Your handoff to `api-dev@acme` was sent (ask_question). <https://relay.test/inbox/t1|View it in the inbox>',
        },
      ],
    ]);
  });

  test('refused: the relay’s refusal goes back on the recipient field and nothing is posted', async () => {
    kit.script('creates.create', async () => {
      throw new RelayError('teammate_blocked', 'api-dev@acme does not take handoffs from you');
    });
    await submit(form());
    expect(formErrors()).toEqual({ [F.recipient]: 'api-dev@acme does not take handoffs from you.' });
    expect(kit.calls('chat.postMessage')).toEqual([]);
  });

  test('refused: a person and a target both, on the target field, before any use case', async () => {
    await submit(form({ [F.target]: { [F.target]: text('role:frontend') } }));
    expect(formErrors()).toEqual({ [F.target]: 'Choose a person or name a role, skill or owner, not both.' });
    expect(kit.calls('creates.create')).toEqual([]);
  });
});

describe.each([
  ['decline', 'pending', INPUTS.reason, 'No capacity this sprint'],
  ['complete', 'accepted', INPUTS.summary, 'Shipped in PR 12'],
  ['reply', 'pending', INPUTS.body, 'Which page size?'],
] as const)('%s modal', (kind, status, input, typed) => {
  covered.add(CALLBACK_IDS[kind]);
  const submit = async (values: Record<string, Record<string, unknown>>, user?: string) => {
    const doc = await kit.insert(storedThread(status));
    const modal = TRANSITION_MODALS[kind]({ thread: doc, shownStatus: status, senderName: sender.name });
    await kit.listener(
      'view',
      CALLBACK_IDS[kind],
    )(
      kit.submission({
        callbackId: CALLBACK_IDS[kind],
        privateMetadata: modal.private_metadata,
        values: values as never,
        ...(user ? { user } : {}),
      }),
    );
    return doc;
  };

  test(`${CALLBACK_IDS[kind]}: makes the ${kind} as the submitter, against the status the modal showed, and closes it`, async () => {
    kit.script('transitions.transition', async () => ({}));
    kit.script('messages.append', async () => ({}));
    const links: Record<string, Record<string, unknown>> = kind === 'complete'
      ? { [INPUTS.links.block_id]: { [INPUTS.links.action_id]: text('https://example.com/pr/12') } }
      : {};
    const doc = await submit({ [input.block_id]: { [input.action_id]: text(`  ${typed} `) }, ...links });
    const actor = expect.objectContaining({ handle: recipient.handle });
    if (kind === 'reply') {
      expect(kit.calls('messages.append')).toEqual([
        [actor, { thread_id: doc._id, body: typed, payload: {}, artifacts: [] }, 'slack'],
      ]);
    } else {
      const details =
        kind === 'decline'
          ? { reason: typed }
          : { result_summary: typed, artifacts: [{ type: 'link', url: 'https://example.com/pr/12' }] };
      expect(kit.calls('transitions.transition')).toEqual([
        [actor, { thread_id: doc._id, transition: kind, expected_status: status, ...details }, 'slack'],
      ]);
    }
    expect(kit.calls('ack')).toEqual([[]]);
  });

  test(`${CALLBACK_IDS[kind]} refused: an empty field is asked for before anything is called`, async () => {
    await submit({ [input.block_id]: { [input.action_id]: text('   ') } });
    expect(formErrors()).toEqual({ [input.block_id]: expect.stringMatching(/^Please write /) });
    expect(kit.whats()).toEqual(['ack']);
  });

  test(`${CALLBACK_IDS[kind]} refused: the relay’s refusal is on the form, in words`, async () => {
    const refusal = async () => {
      throw new RelayError(
        'not_authorized_transition',
        `Only the recipient (${recipient.handle}) can ${kind} this handoff`,
      );
    };
    kit.script('transitions.transition', refusal);
    kit.script('messages.append', refusal);
    await submit({ [input.block_id]: { [input.action_id]: text(typed) } });
    expect(formErrors()).toEqual({
      [input.block_id]: `Only the recipient (${recipient.handle}) can ${kind} this handoff. Nothing was changed.`,
    });
  });

  test(`${CALLBACK_IDS[kind]} refused: a thread that moved on since the modal opened is told how`, async () => {
    const movedOn = async (_actor: unknown, request: { thread_id: string }) => {
      await kit.threads.writeThread(request.thread_id, (d) => ({
        ...d,
        status: 'cancelled',
        status_history: [...d.status_history, { status: 'cancelled', by: sender.handle, at: NOW, via: 'mcp' }],
      }));
      throw new RelayError('thread_terminal', 'The handoff is already cancelled');
    };
    kit.script('transitions.transition', movedOn);
    kit.script('messages.append', movedOn);
    await submit({ [input.block_id]: { [input.action_id]: text(typed) } });
    expect(formErrors()).toEqual({
      [input.block_id]: expect.stringMatching(
        /^This handoff is now cancelled \(by api-dev@acme via MCP, <!date\^\d+\^.*\) since this form was opened\. Nothing was changed; close this form\.$/,
      ),
    });
  });
});

describeView(REASSIGN_VIEW.callbackId, () => {
  const submit = async (picked: string | null, user = sender.slack_user_id!) => {
    const doc = await kit.insert(storedThread('pending'));
    await kit.listener(
      'view',
      REASSIGN_VIEW.callbackId,
    )(
      kit.submission({
        callbackId: REASSIGN_VIEW.callbackId,
        user,
        privateMetadata: reassignModal(doc, recipient.name).private_metadata,
        values: { [REASSIGN_VIEW.block]: { [REASSIGN_VIEW.action]: { type: 'users_select', selected_user: picked } } },
      }),
    );
    return doc;
  };

  test('reassigns to the picked teammate as the submitter, and closes the modal', async () => {
    kit.agents.push({ ...recipient, _id: 'qa@acme', handle: 'qa@acme', slack_user_id: 'U0QA' });
    kit.script('reassignments.reassign', async () => ({}));
    const doc = await submit('U0QA');
    expect(kit.calls('reassignments.reassign')).toEqual([
      [expect.objectContaining({ handle: sender.handle }), doc._id, 'qa@acme', 'slack'],
    ]);
    expect(kit.calls('ack')).toEqual([[]]);
  });

  test('refused: a pick who is not a teammate, on the field', async () => {
    await submit(STRANGER);
    expect(formErrors()).toEqual({
      [REASSIGN_VIEW.block]:
        'That person is not linked to a handoff-relay teammate (they can run /handoff link). Nothing was changed.',
    });
    expect(kit.calls('reassignments.reassign')).toEqual([]);
  });
});

describeView(APPROVAL_REJECT_CALLBACK_ID, () => {
  const submit = async (reason: string) => {
    const doc = storedThread('awaiting_approval');
    const record = pendingApproval(doc);
    kit.agents.push({ ...recipient, _id: 'lead@acme', handle: 'lead@acme', slack_user_id: 'U0LEAD' });
    kit.script('approvalRecords.get', async () => ({ thread: doc, record }));
    await kit.listener(
      'view',
      APPROVAL_REJECT_CALLBACK_ID,
    )(
      kit.submission({
        callbackId: APPROVAL_REJECT_CALLBACK_ID,
        user: 'U0LEAD',
        privateMetadata: approvalRejectModal(record, 'about').private_metadata,
        values: { [APPROVAL_REJECT_INPUT.block_id]: { [APPROVAL_REJECT_INPUT.action_id]: text(reason) } },
      }),
    );
    return record;
  };

  test('rejects with the reason as the approver, and closes the modal', async () => {
    kit.script('approvalDecisions.decide', async () => ({ changed: true, message: 'Rejected.' }));
    const record = await submit('Not this sprint');
    expect(kit.calls('approvalDecisions.decide')).toEqual([
      [record.id, expect.objectContaining({ handle: 'lead@acme' }), 'reject', 'slack', 'Not this sprint'],
    ]);
    expect(kit.calls('ack')).toEqual([[]]);
  });

  test('refused: no reason is asked for before anything is called', async () => {
    await submit('  ');
    expect(formErrors()).toEqual({ [APPROVAL_REJECT_INPUT.block_id]: 'Please write a reason.' });
    expect(kit.calls('approvalDecisions.decide')).toEqual([]);
  });

  test('refused: a decision that changed nothing is told on the field', async () => {
    kit.script('approvalDecisions.decide', async () => ({ changed: false, message: 'Someone decided it first.' }));
    await submit('Not this sprint');
    expect(formErrors()).toEqual({ [APPROVAL_REJECT_INPUT.block_id]: 'Someone decided it first.' });
  });
});
