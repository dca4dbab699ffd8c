// The timer notices' buttons: Snooze (recipient), Reassign (sender, opens a modal) and Resend (sender of an expired handoff).
import type { Logger } from 'pino';
import { RelayError } from '../../../relay-core/domain/errors';
import type { HandoffTimers } from '../../../relay-core/service/handoff-timers';
import type { Relay } from '../../../relay-core/service/relay-service';
import { slackDate } from '../../blocks/mrkdwn';
import { SNOOZE_BY_ACTION } from '../../blocks/timer-action-ids';
import { leadNudgeNotice } from '../../blocks/timer-notices';
import { reassignModal } from '../../views/reassign-modal';
import { checkClick, explain, type ButtonArgs } from './button-click';

export interface TimerButtonDeps {
  reads: Relay['reads'];
  reassignments: Relay['reassignments'];
  teammates: Relay['teammates'];
  timers: HandoffTimers;
  log: Logger;
}

/** A refusal of the relay's in the clicker's words; anything else is the relay's problem. */
async function refused(args: ButtonArgs, error: unknown): Promise<void> {
  if (!(error instanceof RelayError)) throw error;
  await explain(args, `${error.message}. Nothing was changed.`);
}

/** Snooze: the choice is the button's id (1 h, tomorrow morning, next week); the value only names the thread. */
export function snoozeButton({ reads, teammates, timers }: TimerButtonDeps, actionId: keyof typeof SNOOZE_BY_ACTION) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkClick(
      { reads, teammates },
      args,
      { who: 'recipient', verb: 'snooze the reminders of', from: ['pending'] },
      { notice: true },
    );
    if (!click) return;
    try {
      const until = await timers.snooze(click.actor, click.thread._id, SNOOZE_BY_ACTION[actionId], 'slack');
      await explain(args, `Snoozed: the next reminder comes ${slackDate(until)}.`);
    } catch (error) {
      await refused(args, error);
    }
  };
}

export function reassignButton(deps: TimerButtonDeps) {
  return reassignModalButton(deps, 'sender');
}

/** Opens the reassign modal for whoever `who` may reassign (the sender, or the lead it was escalated to). */
function reassignModalButton({ reads, teammates }: TimerButtonDeps, who: 'sender' | 'escalation-lead') {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkClick(
      { reads, teammates },
      args,
      { who, verb: 'reassign', from: ['pending', 'unclaimed'] },
      { notice: true },
    );
    if (!click) return;
    const recipient = click.thread.status === 'unclaimed' ? null : await teammates.get(click.thread.to);
    await args.client.views.open({
      trigger_id: args.body.trigger_id,
      view: reassignModal(click.thread, recipient?.name ?? click.thread.to),
    });
  };
}

/** Nudge on a lead's escalation DM: a reply under the recipient's DM saying who nudges them, so Slack notifies them. */
export function escalationNudgeButton({ reads, teammates, links }: TimerButtonDeps & { links: Relay['links'] }) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkClick(
      { reads, teammates },
      args,
      { who: 'escalation-lead', verb: 'nudge the recipient of', from: ['pending'] },
      { notice: true },
    );
    if (!click) return;
    const { thread, actor } = click;
    const recipient = await teammates.get(thread.to);
    if (!thread.slack || !recipient?.slack_user_id) {
      await explain(
        args,
        `${thread.to} has no Slack DM for this handoff, so there is nobody to nudge here. Nothing was sent.`,
      );
      return;
    }
    const sender = await teammates.get(thread.from);
    const inboxUrl = links.url(thread._id, thread.to);
    await args.client.chat.postMessage({
      channel: thread.slack.channel,
      thread_ts: thread.slack.ts,
      ...leadNudgeNotice({ thread, sender, recipient, inboxUrl }, actor),
    });
    await explain(args, `Nudged <@${recipient.slack_user_id}>: a reminder from you is under their DM of this handoff.`);
  };
}

/** Reassign on a lead's escalation DM: the same modal, and the same use case, as the sender's Reassign. */
export function escalationReassignButton(deps: TimerButtonDeps) {
  return reassignModalButton(deps, 'escalation-lead');
}

export function resendButton({ reads, reassignments, teammates, log }: TimerButtonDeps) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkClick(
      { reads, teammates },
      args,
      { who: 'sender', verb: 'resend', from: ['expired'] },
      { notice: true },
    );
    if (!click) return;
    try {
      const created = await reassignments.resend(click.actor, click.thread._id, 'slack');
      log.info({ thread_id: click.thread._id, resent_as: created.task_id }, 'expired handoff resent');
      await explain(args, `Resent to ${created.recipient} as a new handoff (thread ${created.task_id}).`);
    } catch (error) {
      await refused(args, error);
    }
  };
}
