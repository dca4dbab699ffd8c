// What every DM button click is checked against before anything happens; a refusal is explained to whoever clicked.
import type { AllMiddlewareArgs, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { AgentDoc, ThreadDoc } from '../../../relay-core/domain/documents';
import type { Relay } from '../../../relay-core/service/relay-service';
import { TERMINAL_STATUSES, threadStatusSchema, type ThreadStatus } from '../../../relay-core/domain/schemas';
import { safeJson } from '../safe-json';
import { BLOCK_IDS } from '../../blocks/handoff-dm';
import { slackDate } from '../../blocks/mrkdwn';

export type ButtonArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;

const buttonValueSchema = z.object({ t: z.uuid(), s: threadStatusSchema });

/** Who may press a button: the recipient for transitions, either participant for Reply. */
export type ClickRule =
  | { who: 'recipient'; verb: string; from: readonly ThreadStatus[] }
  | { who: 'participant' }
  | { who: 'sender'; verb: string; from: readonly ThreadStatus[] }
  /** The lead the handoff was escalated to (an escalation DM's Nudge and Reassign). */
  | { who: 'escalation-lead'; verb: string; from: readonly ThreadStatus[] };

export interface CheckedClick {
  thread: ThreadDoc;
  actor: AgentDoc;
  shownStatus: ThreadStatus;
}

/**
 * Tells only the person who clicked: through response_url for a message (it reaches them even outside the
 * DM), or as a small modal for a Home-tab click, which carries no response_url.
 */
export async function explain(args: ButtonArgs, text: string): Promise<void> {
  if (args.body.response_url) {
    await args.respond({ response_type: 'ephemeral', replace_original: false, text });
    return;
  }
  await args.client.views.open({
    trigger_id: args.body.trigger_id,
    view: {
      type: 'modal',
      title: { type: 'plain_text', text: 'handoff-relay' },
      close: { type: 'plain_text', text: 'Close' },
      blocks: [{ type: 'section', text: { type: 'plain_text', text } }],
    },
  });
}

export function historyLine(thread: ThreadDoc): string {
  const last = thread.status_history[thread.status_history.length - 1];
  if (!last) return `is now ${thread.status}`;
  const via = last.via === 'slack' ? 'Slack' : last.via.toUpperCase();
  return `is now ${thread.status} (by ${last.by} via ${via}, ${slackDate(last.at)})`;
}

// The checks: a value we recognise, a thread that exists, a message that is not an out-of-date copy of the DM, a
// linked Slack user allowed to act, and a thread still in the status the button showed.
/** The checks every button runs; null after the refusal was explained. */
/** `notice`: the button is on a timer notice (a reply under the DM), which is never an out-of-date copy of the DM. */
export async function checkClick(
  { reads, teammates }: Pick<Relay, 'reads' | 'teammates'>,
  args: ButtonArgs,
  rule: ClickRule,
  opts: { notice?: boolean } = {},
): Promise<CheckedClick | null> {
  const { body, action } = args;
  const value = buttonValueSchema.safeParse(safeJson(action.value));
  if (!value.success) {
    await explain(args, 'This button is not one handoff-relay recognises; nothing was changed.');
    return null;
  }
  const { t: threadId, s: shownStatus } = value.data;
  const [thread, actor] = await Promise.all([reads.threadById(threadId), teammates.bySlackUser(body.user.id)]);
  if (!thread) {
    await explain(args, 'This handoff no longer exists; nothing was changed.');
    return null;
  }
  // Only a copy of the DM in the DM's own channel can be out of date; Home-tab and ephemeral clicks are not, nor the
  // digest's buttons, which share the DM's channel but not its actions block (theirs are `thread_<id>`).
  // (A click can beat the worker's record of the DM it just posted: with no record there is nothing to compare.)
  const container = body.container as
    { type?: string; channel_id?: string; message_ts?: string; is_ephemeral?: boolean } | undefined;
  const channel = body.channel?.id ?? container?.channel_id;
  const messageTs = body.message?.ts ?? container?.message_ts;
  const onDmButtons = (action as { block_id?: string }).block_id === BLOCK_IDS.actions;
  const inDmChannel =
    onDmButtons &&
    container?.type === 'message' &&
    !container.is_ephemeral &&
    thread.slack !== null &&
    channel === thread.slack.channel;
  if (inDmChannel && !opts.notice && messageTs !== thread.slack!.ts) {
    await explain(args, 'This message is out of date; use the latest message for this handoff. Nothing was changed.');
    return null;
  }
  if (!actor) {
    await explain(
      args,
      'Your Slack account is not linked to a handoff-relay teammate, so you cannot act on this handoff. Nothing was changed.',
    );
    return null;
  }
  if (rule.who === 'recipient' && thread.to !== actor.handle) {
    await explain(args, `Only the recipient (${thread.to}) can ${rule.verb} this handoff. Nothing was changed.`);
    return null;
  }
  if (rule.who === 'sender' && thread.from !== actor.handle) {
    await explain(args, `Only the sender (${thread.from}) can ${rule.verb} this handoff. Nothing was changed.`);
    return null;
  }
  if (rule.who === 'escalation-lead') {
    const to = thread.timers?.escalated_to;
    if (to?.kind !== 'lead' || to.handle !== actor.handle) {
      await explain(
        args,
        `Only the lead this handoff was escalated to${to?.kind === 'lead' && to.handle ? ` (${to.handle})` : ''} can ${rule.verb} it from here. Nothing was changed.`,
      );
      return null;
    }
  }
  if (rule.who === 'participant' && thread.to !== actor.handle && thread.from !== actor.handle) {
    await explain(args, `Only ${thread.from} and ${thread.to} can reply on this handoff. Nothing was changed.`);
    return null;
  }
  if (thread.status !== shownStatus) {
    await explain(
      args,
      `This handoff ${historyLine(thread)}; the button you pressed was for a ${shownStatus} handoff. Nothing was changed.`,
    );
    return null;
  }
  const allowed =
    rule.who === 'participant' ? !TERMINAL_STATUSES.includes(thread.status) : rule.from.includes(thread.status);
  if (!allowed) {
    await explain(args, `This handoff is ${thread.status}; that button does not apply any more. Nothing was changed.`);
    return null;
  }
  return { thread, actor, shownStatus };
}
