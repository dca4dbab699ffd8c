// The timer notices' buttons: Snooze, Reassign and Resend, and a lead's escalation DM's Nudge and Reassign.
import { randomUUID } from 'node:crypto';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../../relay-core/domain/clock';
import type { ThreadDoc } from '../../../relay-core/domain/documents';
import type { ThreadWriter } from '../../../relay-core/domain/thread-writer';
import { RelayError } from '../../../relay-core/domain/errors';
import type { HandoffTimers } from '../../../relay-core/service/handoff-timers';
import type { Relay } from '../../../relay-core/service/relay-service';
import { slackDate } from '../../blocks/mrkdwn';
import { SNOOZE_BY_ACTION } from '../../blocks/timer-action-ids';
import { leadNudgeNotice } from '../../blocks/timer-notices';
import { reassignModal } from '../../views/reassign-modal';
import { CLAIM_LEASE_MS, exactlyOncePost } from '../../delivery/exactly-once-post';
import { noticeKey, type SlackPostKey } from '../../delivery/slack-posts';
import { WaitAndRetry } from '../../delivery/wait-and-retry';
import { checkClick, explain, type ButtonArgs } from './button-click';

/** What Nudge posts with: the thread's post ledger, and the deliveries' client in OAuth mode. */
export interface NudgeDeps {
  links: Relay['links'];
  threads: ThreadWriter;
  clock?: Clock;
  /** OAuth mode: the client that sends each call with the token of the workspace it names (the recipient's). */
  deliveryClient?: WebClient;
}

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

/** Presses of Nudge within this long (Slack's clock: the press's action_ts against the nudge's ts) are that nudge. */
export const NUDGE_REPEAT_WINDOW_S = 10 * 60;
const NUDGE_KEY = /^recipient:t:nudge-(\d+)$/;

/**
 * The post ledger key a press of Nudge posts under (`recipient:t:nudge-<n>`): the latest nudge while it is still being
 * posted or was posted less than NUDGE_REPEAT_WINDOW_S before the press, else the next one. Two presses that read the
 * same thread pick the same key, so the ledger lets one of them post; a press after the window nudges again.
 */
export function nudgeKeyFor(thread: ThreadDoc, pressedAt: number): SlackPostKey {
  let last = 0;
  for (const key of [...Object.keys(thread.slack_replies ?? {}), ...Object.keys(thread.slack_pending ?? {})]) {
    const n = Number(NUDGE_KEY.exec(key)?.[1] ?? 0);
    if (n > last) last = n;
  }
  if (last === 0) return noticeKey('recipient', 'nudge-1');
  const ts = thread.slack_replies?.[noticeKey('recipient', `nudge-${last}`)];
  const repeat = !ts || pressedAt - Number(ts) < NUDGE_REPEAT_WINDOW_S;
  return noticeKey('recipient', `nudge-${repeat ? last : last + 1}`);
}

/**
 * Nudge on a lead's escalation DM: a reply under the recipient's DM saying who nudges them, so Slack notifies them.
 * It is a post of the thread's post ledger (nudgeKeyFor), so a double click or a click Slack sends twice nudges once.
 */
export function escalationNudgeButton(deps: TimerButtonDeps & NudgeDeps) {
  const { reads, teammates, links, threads, log } = deps;
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
    const dm = thread.slack;
    const them = `<@${recipient.slack_user_id}>`;
    const sender = await teammates.get(thread.from);
    const inboxUrl = links.url(thread._id, thread.to);
    // The recipient's DM may be in another workspace than the lead's (OAuth mode): the deliveries' client finds it.
    const ensurePosted = exactlyOncePost({
      threads,
      client: deps.deliveryClient ?? (args.client as WebClient),
      log,
      clock: deps.clock ?? systemClock,
      leaseMs: CLAIM_LEASE_MS,
    });
    const key = nudgeKeyFor(thread, Number(args.action.action_ts));
    let outcome;
    try {
      outcome = await ensurePosted(
        thread._id,
        key,
        `nudge:${randomUUID()}`,
        { channel: async () => dm.channel, thread_ts: dm.ts },
        async (now) => leadNudgeNotice({ thread: now, sender, recipient, inboxUrl }, actor),
        thread,
      );
    } catch (error) {
      if (!(error instanceof WaitAndRetry)) throw error;
      // Another press of Nudge is posting this very nudge right now.
      await explain(args, `Your nudge to ${them} is being sent already; nothing more was sent.`);
      return;
    }
    if (outcome.posted) {
      log.info({ thread_id: thread._id, post: key, by: actor.handle }, 'escalation nudge posted');
      await explain(args, `Nudged ${them}: a reminder from you is under their DM of this handoff.`);
      return;
    }
    await explain(
      args,
      `You nudged ${them} ${slackDate(new Date(Number(outcome.ts) * 1000))}; nothing more was sent. Nudge again after ${NUDGE_REPEAT_WINDOW_S / 60} minutes.`,
    );
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
