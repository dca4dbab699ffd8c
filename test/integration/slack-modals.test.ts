// Decline / Complete / Reply: the button opens a modal (views.open, checked by the fake Slack's limits), the
// submission makes the change through the real Bolt receiver, and problems come back on the field.
import type { FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import type { TestRelay } from '../helpers/relay-harness';
import {
  dmText,
  openModal,
  pressAndFinish,
  submit,
  threadDoc,
  waitForExplanation,
  type DeliveredDm,
} from '../helpers/slack-dm';
import { RECIPIENT, SENDER, startSlackTeam, STRANGER, type SlackTeam } from '../helpers/slack-team';
import { waitUntil } from '../helpers/wait-until';

let team: SlackTeam;
let slack: FakeSlack;
let relay: TestRelay;
let senderKey: string;
let recipientKey: string;

beforeAll(async () => {
  team = await startSlackTeam('slack_modals', { captureLogs: true });
  ({ slack, relay, senderKey, recipientKey } = team);
});

afterAll(async () => {
  await team?.close();
});

const handoff = (summary: string) => team.handoff(summary);

/** The ack body of a submission: {} when the modal closes, else Slack's response_action. */
function ackBody(answer: { status: number; text: string }): Record<string, any> {
  expect(answer.status).toBe(200);
  return answer.text ? JSON.parse(answer.text) : {};
}

async function waitForDm(dm: DeliveredDm, ...parts: string[]): Promise<string> {
  return waitUntil(
    async () => {
      const shown = dmText(slack, dm.channel, dm.ts);
      return parts.every((p) => shown.includes(p)) ? shown : undefined;
    },
    `the DM to show ${parts.join(', ')}`,
  );
}

describe('Decline', () => {
  test('asks for a reason; the DM then shows declined, the reason, who, when and via Slack', async () => {
    const dm = await handoff('please decline');
    const view = await openModal(relay, slack, dm.click('handoff_decline'));
    expect(view).toMatchObject({ callback_id: 'handoff_decline_modal' });
    expect(JSON.parse(view.private_metadata as string)).toEqual({ t: dm.threadId, s: 'pending' });

    const empty = ackBody(
      await submit(relay, { user: RECIPIENT, view, values: { decline_reason: { reason: '   ' } } }),
    );
    expect(empty).toEqual({ response_action: 'errors', errors: { decline_reason: 'Please write a reason.' } });
    const tooLong = ackBody(
      await submit(relay, { user: RECIPIENT, view, values: { decline_reason: { reason: 'x'.repeat(3001) } } }),
    );
    expect(tooLong.errors.decline_reason).toBe('Please keep it to 3000 characters.');
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');

    const done = ackBody(
      await submit(relay, {
        user: RECIPIENT,
        view,
        values: { decline_reason: { reason: 'Out of scope for <!channel> this sprint' } },
      }),
    );
    expect(done).toEqual({});
    const doc = await threadDoc(relay, dm.threadId);
    expect(doc).toMatchObject({ status: 'declined', decline_reason: 'Out of scope for <!channel> this sprint' });
    expect(doc.status_history.at(-1)).toMatchObject({ status: 'declined', by: 'recipient@acme', via: 'slack' });
    const shown = await waitForDm(dm, 'Declined by', 'Out of scope for &lt;!channel&gt; this sprint');
    expect(shown).toContain(`<@${RECIPIENT}> via Slack`);
    expect(shown).not.toContain('handoff_accept');

    // The same form submitted again (a double press or a retry) changes nothing and says why.
    const again = ackBody(
      await submit(relay, { user: RECIPIENT, view, values: { decline_reason: { reason: 'twice' } } }),
    );
    expect(again.errors.decline_reason).toMatch(
      /is now declined \(by recipient@acme via Slack, <!date\^\d+\^.*\) since this form was opened/,
    );
    expect(await threadDoc(relay, dm.threadId)).toMatchObject({
      decline_reason: 'Out of scope for <!channel> this sprint',
    });
  });

  test('a submission after the thread changed meanwhile is refused on the field and explains how it changed', async () => {
    const dm = await handoff('cancelled while deciding');
    const view = await openModal(relay, slack, dm.click('handoff_decline'));
    const cancelled = await relay.rpc(senderKey, 'tasks/cancel', { task_id: dm.threadId, reason: 'not needed' });
    expect(cancelled.body.error).toBeUndefined();
    const answer = ackBody(
      await submit(relay, { user: RECIPIENT, view, values: { decline_reason: { reason: 'no time' } } }),
    );
    expect(answer.response_action).toBe('errors');
    expect(answer.errors.decline_reason).toMatch(
      /is now cancelled \(by sender@acme via A2A, <!date\^\d+\^.*\) since this form was opened\. Nothing was changed/,
    );
    expect(await threadDoc(relay, dm.threadId)).toMatchObject({ status: 'cancelled', decline_reason: null });
  });

  test('private_metadata the app never wrote is refused and changes nothing', async () => {
    const dm = await handoff('forged metadata');
    const view = await openModal(relay, slack, dm.click('handoff_decline'));
    for (const privateMetadata of [
      '',
      'not json',
      JSON.stringify({ t: dm.threadId, s: 'finished' }),
      JSON.stringify({ t: 'x', s: 'pending' }),
    ]) {
      const answer = ackBody(
        await submit(relay, { user: RECIPIENT, view, privateMetadata, values: { decline_reason: { reason: 'no' } } }),
      );
      expect(answer.errors.decline_reason).toMatch(/not one handoff-relay recognises/);
    }
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
  });

  test('only the recipient: the sender’s and an unlinked user’s submissions are refused on the field', async () => {
    const dm = await handoff('decline auth');
    const view = await openModal(relay, slack, dm.click('handoff_decline'));
    const bySender = ackBody(
      await submit(relay, { user: SENDER, view, values: { decline_reason: { reason: 'mine' } } }),
    );
    expect(bySender.errors.decline_reason).toMatch(/Only the recipient \(recipient@acme\) can decline/);
    const byStranger = ackBody(
      await submit(relay, { user: STRANGER, view, values: { decline_reason: { reason: 'mine' } } }),
    );
    expect(byStranger.errors.decline_reason).toMatch(/not linked to a handoff-relay teammate/);
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
  });

  test('the sender pressing Decline gets an explanation and no modal', async () => {
    const dm = await handoff('sender presses decline');
    const click = dm.click('handoff_decline', { user: SENDER });
    await pressAndFinish(relay, click);
    await waitForExplanation(slack, click.responseUrl!, /Only the recipient \(recipient@acme\) can decline/);
    expect(slack.callsTo('views.open').filter((c) => c.args.trigger_id === click.triggerId)).toHaveLength(0);
  });

  test('from an ephemeral message in the DM channel (not the recorded DM) the modal still opens', async () => {
    const dm = await handoff('ephemeral click');
    const view = await openModal(
      relay,
      slack,
      dm.click('handoff_decline', { surface: 'ephemeral', messageTs: '1699999999.000200' }),
    );
    expect(view).toMatchObject({ callback_id: 'handoff_decline_modal' });
  });
});

describe('Complete', () => {
  test('asks for the result and optional links; the thread completes with them as link artifacts', async () => {
    const dm = await handoff('please complete');
    const accepted = await relay.rpc(recipientKey, 'tasks/update', { task_id: dm.threadId, transition: 'accept' });
    expect(accepted.body.error).toBeUndefined();
    await waitForDm(dm, 'handoff_complete');
    const view = await openModal(relay, slack, dm.click('handoff_complete'));
    expect(view).toMatchObject({ callback_id: 'handoff_complete_modal' });

    const badLink = ackBody(
      await submit(relay, {
        user: RECIPIENT,
        view,
        values: {
          complete_summary: { summary: 'Shipped' },
          complete_links: { links: 'https://github.com/acme/app/pull/42\nftp://files.acme/x' },
        },
      }),
    );
    expect(badLink).toEqual({
      response_action: 'errors',
      errors: { complete_links: 'Line 2 is not an http(s) URL (one URL per line).' },
    });

    const done = ackBody(
      await submit(relay, {
        user: RECIPIENT,
        view,
        values: {
          complete_summary: { summary: 'Shipped in #42' },
          complete_links: { links: '\nhttps://github.com/acme/app/pull/42\n' },
        },
      }),
    );
    expect(done).toEqual({});
    expect(await threadDoc(relay, dm.threadId)).toMatchObject({
      status: 'completed',
      completed_summary: 'Shipped in #42',
      completion_artifacts: [{ type: 'link', url: 'https://github.com/acme/app/pull/42' }],
    });
    await waitForDm(dm, 'Completed by', 'Shipped in #42', 'via Slack');
  });

  test('links are optional; an empty summary is refused on its field', async () => {
    const dm = await handoff('complete without links');
    await relay.rpc(recipientKey, 'tasks/update', { task_id: dm.threadId, transition: 'accept' });
    await waitForDm(dm, 'handoff_complete');
    const view = await openModal(relay, slack, dm.click('handoff_complete'));
    const empty = ackBody(
      await submit(relay, {
        user: RECIPIENT,
        view,
        values: { complete_summary: { summary: '' }, complete_links: { links: null } },
      }),
    );
    expect(empty).toEqual({ response_action: 'errors', errors: { complete_summary: 'Please write what was done.' } });
    expect(
      ackBody(
        await submit(relay, {
          user: RECIPIENT,
          view,
          values: { complete_summary: { summary: 'Done' }, complete_links: { links: null } },
        }),
      ),
    ).toEqual({});
    expect(await threadDoc(relay, dm.threadId)).toMatchObject({ status: 'completed', completion_artifacts: [] });
  });
});

describe('Reply', () => {
  test('adds the message to the thread, where the other side reads it with tasks/get', async () => {
    const dm = await handoff('reply to me');
    const view = await openModal(relay, slack, dm.click('handoff_reply'));
    expect(view).toMatchObject({ callback_id: 'handoff_reply_modal' });
    expect(
      ackBody(await submit(relay, { user: RECIPIENT, view, values: { reply_body: { body: 'Which branch?' } } })),
    ).toEqual({});
    const { body } = await relay.rpc(senderKey, 'tasks/get', { task_id: dm.threadId });
    expect(JSON.stringify(body.result)).toContain('Which branch?');
    const doc = await threadDoc(relay, dm.threadId);
    expect(doc).toMatchObject({ status: 'pending', message_seq: 1, message_counts: { from: 0, to: 1 } });
  });

  test('the sender may reply too; a finished thread refuses the reply on the field', async () => {
    const dm = await handoff('reply then finished');
    const view = await openModal(relay, slack, dm.click('handoff_reply'));
    expect(
      ackBody(await submit(relay, { user: SENDER, view, values: { reply_body: { body: 'From the sender' } } })),
    ).toEqual({});
    await relay.rpc(senderKey, 'tasks/cancel', { task_id: dm.threadId });
    const late = ackBody(await submit(relay, { user: RECIPIENT, view, values: { reply_body: { body: 'Too late' } } }));
    expect(late.errors.reply_body).toMatch(/is now cancelled .* since this form was opened/);
    expect((await threadDoc(relay, dm.threadId)).message_seq).toBe(1);
  });
});

test('every modal the buttons open passed the fake Slack’s view checks (100 blocks, text limits, submit)', () => {
  const opened = slack.calls.filter((c) => c.method === 'views.open');
  expect(opened.length).toBeGreaterThan(0);
  expect(opened.filter((c) => c.response.ok !== true).map((c) => c.response)).toEqual([]);
});
