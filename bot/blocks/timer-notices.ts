// What the timers say in Slack: reminders and the nudge under the recipient's DM, escalations, and expiry notices.
import type { AgentDoc, EscalationTarget, ThreadDoc, TimerStep } from '../../relay-core/domain/documents';
import { actions, button, context, section, type SlackBlock, type SlackMessage } from './block-kit';
import { personMrkdwn } from './handoff-dm';
import { escapeWithin, inlineCode, link, slackDate, truncate } from './mrkdwn';
import { TIMER_ACTION_IDS } from './timer-action-ids';

export interface NoticeInput {
  thread: ThreadDoc;
  sender: AgentDoc | null;
  recipient: AgentDoc | null;
  inboxUrl: string;
}

/** The value every timer control carries: the same `{ t, s }` as the DM's buttons (checked by button-click.ts). */
export function controlValue(thread: ThreadDoc): string {
  return JSON.stringify({ t: thread._id, s: thread.status });
}

const INTENT_WORDS: Record<ThreadDoc['intent'], string> = {
  inform: 'shared something with',
  ask_question: 'asked a question of',
  propose_action: 'proposed an action to',
};

function plain(text: string): string {
  return escapeWithin(text, 300).text;
}

function gist(thread: ThreadDoc): string {
  return truncate(thread.summary.replace(/\s+/g, ' ').trim(), 120);
}

/** remind-1, remind-2, …: a thread reply under the recipient's DM with Snooze. */
export function reminderNotice(input: NoticeInput, step: TimerStep): SlackMessage {
  const { thread, sender } = input;
  const n = Number(step.slice('remind-'.length));
  const value = controlValue(thread);
  const again = n > 1 ? ' (again)' : '';
  const blocks: SlackBlock[] = [
    section(
      `:alarm_clock: *Reminder${again}:* ${personMrkdwn(sender, thread.from)} is waiting for you to accept or decline this handoff, sent ${slackDate(thread.created_at)}. Use the buttons on the message above.`,
    ),
    actions([
      button({ actionId: TIMER_ACTION_IDS.snooze1h, text: 'Snooze 1 hour', value }),
      button({ actionId: TIMER_ACTION_IDS.snoozeTomorrow, text: 'Tomorrow morning', value }),
      button({ actionId: TIMER_ACTION_IDS.snoozeWeek, text: 'Next week', value }),
    ]),
  ];
  return { text: plain(`Reminder${again}: a handoff waits for you: ${gist(thread)}`), blocks };
}

/** True while a handoff to a role, skill or owner target was never claimed (nor reassigned to one teammate). */
export function neverClaimed(thread: ThreadDoc): boolean {
  return (
    Boolean(thread.to_target) &&
    (thread.candidates?.length ?? 0) > 1 &&
    !thread.claimed_by &&
    thread.to === thread.to_target
  );
}

/** remind-1, remind-2, … of an unclaimed handoff: a reply under its Claim card (the bound channel's, or each candidate's DM copy). */
export function unclaimedReminderNotice(input: NoticeInput, step: TimerStep): SlackMessage {
  const { thread, sender } = input;
  const again = Number(step.slice('remind-'.length)) > 1 ? ' (again)' : '';
  return {
    text: plain(
      `Reminder${again}: nobody has claimed this handoff for ${thread.to_target ?? thread.to} yet: ${gist(thread)}`,
    ),
    blocks: [
      section(
        `:alarm_clock: *Reminder${again}:* nobody has claimed this handoff for ${inlineCode(thread.to_target ?? thread.to, 200)} since ${personMrkdwn(sender, thread.from)} sent it ${slackDate(thread.created_at)}. Press *Claim* on the message above to take it on.`,
      ),
    ],
  };
}

/** stale: the gentler nudge of an accepted handoff that is not completed. */
export function staleNotice(input: NoticeInput): SlackMessage {
  const { thread } = input;
  const since = thread.accepted_at ? slackDate(thread.accepted_at) : 'a while ago';
  return {
    text: plain(`A gentle nudge: you accepted a handoff that is not completed yet: ${gist(thread)}`),
    blocks: [
      section(
        `:wave: A gentle nudge: you accepted this handoff ${since}. When it is done, press *Complete* on the message above.`,
      ),
    ],
  };
}

function targetMrkdwn(target: EscalationTarget): string {
  if (target.kind === 'channel' && target.slack) return `<#${target.slack}>`;
  if (target.slack && /^[UW][A-Z0-9]{2,20}$/.test(target.slack)) return `<@${target.slack}>`;
  return target.handle ? inlineCode(target.handle, 140) : 'the sender';
}

/**
 * The escalation for the recipient's lead (a DM) or the escalation channel: who waits on whom since when, and the
 * handoff's title (not its content). A lead's DM carries Nudge, Reassign and Open while the handoff still waits.
 */
export function escalationMessage(input: NoticeInput, opts: { lead?: boolean } = {}): SlackMessage {
  const { thread, sender, recipient } = input;
  const unclaimed = neverClaimed(thread);
  const who = `${personMrkdwn(sender, thread.from)} ${INTENT_WORDS[thread.intent]} ${unclaimed ? inlineCode(thread.to, 200) : personMrkdwn(recipient, thread.to)}`;
  const verb = unclaimed ? 'claimed' : 'accepted';
  // A lead reads the title (the DM is theirs alone); a channel only who waits on whom since when.
  const title = opts.lead ? ` — “${escapeWithin(gist(thread), 200).text}” —` : '';
  const blocks: SlackBlock[] = [
    section(
      `:rotating_light: *Escalated:* ${who} on ${slackDate(thread.created_at)}${title} and it has not been ${verb} yet.`,
    ),
  ];
  const waiting = thread.status === 'pending' || thread.status === 'unclaimed';
  if (opts.lead && waiting) {
    const value = controlValue(thread);
    const elements: SlackBlock[] = [];
    if (!unclaimed)
      elements.push(
        button({
          actionId: TIMER_ACTION_IDS.escalationNudge,
          text: `Nudge ${truncate(recipient?.name ?? thread.to, 40)}`,
          value,
        }),
      );
    elements.push(
      button({ actionId: TIMER_ACTION_IDS.escalationReassign, text: 'Reassign', style: 'primary', value }),
      button({ actionId: TIMER_ACTION_IDS.escalationOpen, text: 'Open', url: input.inboxUrl }),
    );
    blocks.push(actions(elements));
  }
  blocks.push(
    context(`Thread ${inlineCode(thread._id, 80)} · ${inlineCode(thread.from, 140)} → ${inlineCode(thread.to, 140)}`),
  );
  return {
    text: plain(
      opts.lead
        ? `Escalated: ${recipient?.name ?? thread.to} has not ${verb} “${gist(thread)}” from ${sender?.name ?? thread.from}`
        : `Escalated: a handoff to ${recipient?.name ?? thread.to} has not been ${verb} yet`,
    ),
    blocks,
  };
}

/** The nudge a lead sends from an escalation DM: a reply under the recipient's DM naming who nudged. */
export function leadNudgeNotice(input: NoticeInput, lead: AgentDoc): SlackMessage {
  const { thread, sender } = input;
  return {
    text: plain(
      `${lead.name} nudges you: a handoff from ${sender?.name ?? thread.from} waits for you: ${gist(thread)}`,
    ),
    blocks: [
      section(
        `:wave: ${personMrkdwn(lead, lead.handle)} nudges you: ${personMrkdwn(sender, thread.from)} is still waiting for you to accept or decline “${escapeWithin(gist(thread), 200).text}” (sent ${slackDate(thread.created_at)}). Use the buttons on the message above.`,
      ),
    ],
  };
}

/** The escalation back to the sender, under their DM, with Reassign while the handoff is still pending. */
export function escalationSenderNotice(input: NoticeInput): SlackMessage {
  const { thread, recipient } = input;
  const unclaimed = neverClaimed(thread);
  const who = unclaimed
    ? `Nobody (${inlineCode(thread.to, 200)}) has claimed`
    : `${personMrkdwn(recipient, thread.to)} has not accepted`;
  const blocks: SlackBlock[] = [
    section(
      `:rotating_light: ${who} this handoff since ${slackDate(thread.created_at)}. You can hand it to someone else.`,
    ),
  ];
  if (thread.status === 'pending' || thread.status === 'unclaimed')
    blocks.push(
      actions([
        button({
          actionId: TIMER_ACTION_IDS.reassign,
          text: 'Reassign',
          style: 'primary',
          value: controlValue(thread),
        }),
      ]),
    );
  const text = unclaimed
    ? `Nobody (${thread.to}) has claimed your handoff yet: ${gist(thread)}`
    : `${recipient?.name ?? thread.to} has not accepted your handoff yet: ${gist(thread)}`;
  return { text: plain(text), blocks };
}

const EXPIRY_WHY = {
  token_expired: 'its handoff token ran out before anyone accepted it',
  expire_after: 'it waited too long without being accepted',
  never_claimed: 'it waited too long without anyone claiming it',
} as const;

/** expire: a reply under each DM; the sender's carries Resend. */
export function expiredNotice(
  input: NoticeInput,
  audience: 'recipient' | 'sender',
  reason: 'token_expired' | 'expire_after',
): SlackMessage {
  const { thread } = input;
  const why = EXPIRY_WHY[neverClaimed(thread) ? 'never_claimed' : reason];
  const blocks: SlackBlock[] = [
    section(`:hourglass: *This handoff expired* ${thread.expired_at ? slackDate(thread.expired_at) : ''}: ${why}.`),
  ];
  if (audience === 'sender') {
    blocks.push(
      actions([
        button({ actionId: TIMER_ACTION_IDS.resend, text: 'Resend', style: 'primary', value: controlValue(thread) }),
        button({ actionId: 'handoff_open_inbox', text: 'View in inbox', url: input.inboxUrl }),
      ]),
    );
  } else {
    blocks.push(context(link(input.inboxUrl, 'View it in the inbox')));
  }
  return { text: plain(`A handoff expired: ${gist(thread)}`), blocks };
}

type FiredSteps = Partial<Record<TimerStep, Date>>;

function inOrder(fired: FiredSteps | undefined): string[] {
  return Object.entries(fired ?? {})
    .sort(([, a], [, b]) => new Date(a as Date).getTime() - new Date(b as Date).getTime())
    .map(([step]) => step);
}

function stepWords(step: string, them: string, target: EscalationTarget | null | undefined): string {
  if (step === 'remind-1') return `reminded ${them}`;
  if (step.startsWith('remind-')) return `reminded ${them} again`;
  if (step === 'stale') return `nudged ${them}`;
  if (step === 'escalate')
    return target?.kind === 'sender'
      ? 'escalated back to you'
      : `escalated to ${target ? targetMrkdwn(target) : 'a lead'}`;
  return 'expired';
}

/**
 * What the timers did, in one line for the sender's DM: "reminded @bob · reminded @bob again · escalated to @lead";
 * for a claimed handoff what happened while it waited unclaimed comes first ("reminded the candidates · claimed by @ana · …").
 */
export function timerSummaryLine(thread: ThreadDoc, recipient: AgentDoc | null): string | null {
  const before = inOrder(thread.timers?.unclaimed_fired);
  const words = before.map((step) => (step === 'escalate' ? 'escalated' : stepWords(step, 'the candidates', null)));
  if (before.length > 0 && thread.claimed_by) words.push(`claimed by ${personMrkdwn(recipient, thread.claimed_by)}`);
  const them = neverClaimed(thread) ? 'the candidates' : personMrkdwn(recipient, thread.to);
  words.push(...inOrder(thread.timers?.fired).map((step) => stepWords(step, them, thread.timers?.escalated_to)));
  return words.length > 0 ? `:alarm_clock: ${words.join(' · ')}` : null;
}

/** The old recipient's DM once the sender reassigned the handoff: what it was and where it went, no buttons. */
export function reassignedDm(input: NoticeInput, movedAt: Date): SlackMessage {
  const { thread, sender, recipient } = input;
  return {
    text: plain(`Reassigned to ${recipient?.name ?? thread.to}: ${gist(thread)}`),
    blocks: [
      section(
        `:arrows_counterclockwise: *Reassigned:* ${personMrkdwn(sender, thread.from)} handed this handoff to ${personMrkdwn(recipient, thread.to)} ${slackDate(movedAt)}. Nothing more to do here.`,
      ),
      context(`Thread ${inlineCode(thread._id, 80)} · ${escapeWithin(gist(thread), 200).text}`),
    ],
  };
}
