// A handoff delivered as a Slack DM, and the clicks and modal submissions a person makes on it, through
// the real Bolt receiver (signed requests) against the fake Slack Web API.
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { FakeSlack, FakeSlackCall } from '../../scripts/fake-slack/fake-slack-api';
import type { TestRelay } from './relay-harness';
import {
  clickButton,
  submitView,
  type ButtonClick,
  type ViewSubmission,
} from '../../scripts/fake-slack/slack-requests';
import { waitUntil } from './wait-until';
import { sendHandoff } from './handoffs';

export interface DeliveredDm {
  threadId: string;
  channel: string;
  ts: string;
  /** The value of a button on the DM as it stands now (its action_id), e.g. handoff_decline. */
  buttonValue(actionId: string): string;
  /** A click on the DM's button as it stands now; `over` changes who, where, and so on. */
  click(actionId: string, over?: Partial<ButtonClick>): ButtonClick;
}

export function dmBlocks(slack: FakeSlack, channel: string, ts: string): any[] {
  const message = slack.messages.get(channel)?.find((m) => m.ts === ts);
  if (!message) throw new Error(`no DM ${channel}/${ts} in the fake Slack`);
  return message.blocks as any[];
}

export function dmText(slack: FakeSlack, channel: string, ts: string): string {
  return JSON.stringify(dmBlocks(slack, channel, ts));
}

/** Sends a handoff over A2A and waits until its DM is posted and recorded on the thread. */
export async function deliveredHandoff(
  relay: TestRelay,
  slack: FakeSlack,
  senderKey: string,
  opts: { to: string; recipientSlackUser: string; summary: string; metadata?: Record<string, unknown> },
): Promise<DeliveredDm> {
  const threadId = await sendHandoff(
    relay,
    senderKey,
    opts.to,
    opts.summary,
    opts.metadata ? { metadata: opts.metadata } : {},
  );
  const thread = await waitUntil(async () => {
    const doc = await relay.store.threads.findOne({ _id: threadId });
    return doc?.slack ? doc : undefined;
  }, 'the DM to be posted');
  const { channel, ts } = thread.slack!;
  const buttonValue = (actionId: string): string => {
    const button = dmBlocks(slack, channel, ts)
      .flatMap((b) => (b.type === 'actions' ? b.elements : []))
      .find((e: any) => e.action_id === actionId);
    if (!button) throw new Error(`the DM has no ${actionId} button now: ${dmText(slack, channel, ts)}`);
    return button.value;
  };
  return {
    threadId,
    channel,
    ts,
    buttonValue,
    click: (actionId, over = {}) => ({
      user: opts.recipientSlackUser,
      channel,
      messageTs: ts,
      actionId,
      value: over.value ?? buttonValue(actionId),
      responseUrl: slack.responseUrl(`${threadId}-${actionId}-${over.user ?? opts.recipientSlackUser}`),
      triggerId: slack.triggerId(),
      ...over,
    }),
  };
}

export function press(relay: TestRelay, click: ButtonClick) {
  return clickButton(`${relay.url}/slack/events`, relay.signingSecret, click);
}

/**
 * Presses, then waits until the click's listeners have all finished (Bolt acks before they end), so that what they
 * would still send has been sent. Needs a relay started with captureLogs.
 */
export async function pressAndFinish(relay: TestRelay, click: ButtonClick) {
  const handled = () =>
    relay.logs.filter((l) => l.msg === 'slack request handled' && l.action_id === click.actionId).length;
  const before = handled();
  const answer = await press(relay, click);
  await waitUntil(async () => handled() > before, `the ${click.actionId} click to be handled`);
  return answer;
}

export function submit(relay: TestRelay, submission: ViewSubmission) {
  return submitView(`${relay.url}/slack/events`, relay.signingSecret, submission);
}

/** Presses a button that opens a modal; returns the modal as the fake Slack opened it. */
export async function openModal(
  relay: TestRelay,
  slack: FakeSlack,
  click: ButtonClick,
): Promise<Record<string, unknown>> {
  const answer = await press(relay, click);
  if (answer.status !== 200) throw new Error(`click answered ${answer.status}`);
  const call = await slack.waitFor('views.open', (c) => c.args.trigger_id === click.triggerId);
  return call.response.view as Record<string, unknown>;
}

/** The ephemeral explanations sent to one response_url. */
export function explanations(slack: FakeSlack, responseUrl: string): FakeSlackCall[] {
  return slack.calls.filter(
    (c) =>
      c.method === 'response_url' &&
      c.args.response_url === decodeURIComponent(new URL(responseUrl).pathname.slice('/response/'.length)),
  );
}

export async function waitForExplanation(slack: FakeSlack, responseUrl: string, pattern: RegExp): Promise<string> {
  return waitUntil(async () => {
    const texts = explanations(slack, responseUrl).map((c) => String(c.args.text));
    return texts.find((t) => pattern.test(t));
  }, `an ephemeral explanation matching ${pattern}`);
}

export async function threadDoc(relay: TestRelay, threadId: string): Promise<ThreadDoc> {
  const doc = await relay.store.threads.findOne({ _id: threadId });
  if (!doc) throw new Error(`no thread ${threadId}`);
  return doc;
}
