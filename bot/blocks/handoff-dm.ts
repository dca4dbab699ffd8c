// A handoff's DM, for its recipient or its sender: a pure function of the thread, rendered anew on every change.
import type { AgentDoc, StatusChange, ThreadDoc } from '../../relay-core/domain/documents';
import type { Intent, ThreadStatus } from '../../relay-core/domain/schemas';
import { isFinishedRun } from '../../relay-core/domain/run';
import { stateVersion } from '../../relay-core/domain/thread-lifecycle';
import { artifactBlocks } from './artifacts';
import {
  actions,
  button,
  context,
  divider,
  header,
  section,
  SLACK_LIMITS,
  textLength,
  type SlackBlock,
  type SlackMessage,
} from './block-kit';
import { TIMER_ACTION_IDS } from './timer-action-ids';
import { openWebInboxButton } from './web-inbox';
import {
  escapeLine,
  escapeMrkdwn,
  escapeWithin,
  fencedLines,
  inlineCode,
  link,
  plainSafe,
  slackDate,
  truncate,
} from './mrkdwn';

export type { SlackBlock, SlackMessage } from './block-kit';
export { renderArtifact } from './artifacts';

// Teammate text is escaped; the whole message stays within Slack's Block Kit limits for the largest handoff the
// relay accepts, linking to the inbox for whatever does not fit.

export const ACTION_IDS = {
  accept: 'handoff_accept',
  decline: 'handoff_decline',
  complete: 'handoff_complete',
  reply: 'handoff_reply',
  openInbox: 'handoff_open_inbox',
  /** Hand to my agent: accept if pending, then queue a run for the recipient's runner (docs/agent-runner.md). */
  handToAgent: 'handoff_run_agent',
  /** Stop the recipient's agent: its runner ends the agent's process group. */
  stopAgent: 'handoff_stop_agent',
} as const;

/** Block ids the DM carries (the status section and the buttons), for listeners that look them up. */
export const BLOCK_IDS = {
  status: 'handoff_status',
  actions: 'handoff_actions',
} as const;

export type DmAudience = 'recipient' | 'sender';

export interface DmInput {
  thread: ThreadDoc;
  sender: AgentDoc | null;
  recipient: AgentDoc | null;
  inboxUrl: string;
  /** Whose DM this is: the recipient (default) acts on the handoff; the sender follows it. */
  audience?: DmAudience;
  /** Plain text shown under the header, e.g. "Verifying acceptance…"; escaped by the builder. */
  notice?: string;
  /** What the timers did, as mrkdwn built by timer-notices.ts (timerSummaryLine), shown under the status. */
  timerLine?: string | null;
}

/** Caps on each part of the handoff, chosen so the worst case of all of them leaves room for artifacts. */
const CAP = {
  notice: 400,
  summary: 2000,
  question: 1500,
  description: 800,
  targetFiles: 500,
  rationale: 800,
  suggestedDiff: 1200,
  result: 1200,
  reason: 1000,
  name: 60,
  /** Lines of status history shown (a thread has at most three today). */
  history: 6,
} as const;
/** Notification text: a lock screen shows about a line or two. */
const FALLBACK_MAX = 300;
/** Room kept for the two "+N more artifacts" lines. */
const MORE_LINE = 160;

const INTENT_LABEL: Record<DmAudience, Record<Intent, string>> = {
  recipient: {
    inform: ':information_source: *For your information*',
    ask_question: ':question: *Asks you a question*',
    propose_action: ':hammer_and_wrench: *Proposes an action for you*',
  },
  sender: {
    inform: ':information_source: *You shared this for their information*',
    ask_question: ':question: *You asked a question*',
    propose_action: ':hammer_and_wrench: *You proposed an action*',
  },
};

const STATUS_VERB: Record<ThreadStatus, { emoji: string; verb: string }> = {
  pending: { emoji: ':outbox_tray:', verb: 'Sent' },
  accepted: { emoji: ':white_check_mark:', verb: 'Accepted' },
  completed: { emoji: ':tada:', verb: 'Completed' },
  declined: { emoji: ':no_entry_sign:', verb: 'Declined' },
  cancelled: { emoji: ':wastebasket:', verb: 'Cancelled' },
  expired: { emoji: ':hourglass:', verb: 'Expired' },
  unclaimed: { emoji: ':outbox_tray:', verb: 'Sent' },
  awaiting_approval: { emoji: ':raised_hand:', verb: 'Held for approval' },
  rejected: { emoji: ':no_entry:', verb: 'Rejected' },
};

const SURFACE_NAME: Record<string, string> = {
  slack: 'Slack',
  mcp: 'MCP',
  a2a: 'A2A',
  web: 'the web inbox',
  api: 'the API',
  rest: 'the API',
};

const SLACK_USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/** A person as mrkdwn: a Slack mention when linked, else their escaped name (or handle). */
export function personMrkdwn(agent: AgentDoc | null, handle: string): string {
  if (agent?.slack_user_id && SLACK_USER_ID.test(agent.slack_user_id)) return `<@${agent.slack_user_id}>`;
  return `*${escapeLine((agent?.name ?? handle).replace(/\*/g, ''), CAP.name)}*`;
}

/** How a surface reads in "… via MCP". */
export function surfaceName(via: string): string {
  return SURFACE_NAME[via] ?? escapeLine(via, 20);
}

function nameOf(agent: AgentDoc | null, handle: string): string {
  return truncate((agent?.name ?? handle).replace(/\s+/g, ' '), CAP.name);
}

/** Teammate text as a block quote, escaped and cut within `max`. */
function quote(text: string, max: number): { text: string; cut: boolean } {
  const { text: escaped, cut } = escapeWithin(text, max);
  return { text: `>${escaped.replace(/\n/g, '\n>')}`, cut };
}

function readMore(cut: boolean, inboxUrl: string, what: string): string {
  return cut ? `\n${link(inboxUrl, `Read the whole ${what} in the inbox`)}` : '';
}

function buttonValue(thread: ThreadDoc): string {
  return JSON.stringify({ t: thread._id, s: thread.status });
}

/** The change a policy holds on this thread as it stands (an accept, a complete …), while its approval is open. */
function heldChange(thread: ThreadDoc) {
  return thread.approvals?.find(
    (a) => a.action !== 'handoff.create' && a.status === 'pending' && a.state_version === stateVersion(thread),
  );
}

function actionButtons(input: DmInput, audience: DmAudience): SlackBlock {
  const { thread } = input;
  const value = buttonValue(thread);
  const elements: SlackBlock[] = [];
  // A held change is not offered again while its approval is open (Hand to my agent accepts a pending handoff too).
  const held = heldChange(thread)?.action;
  const acceptHeld = held === 'handoff.accept';
  if (audience === 'recipient' && thread.status === 'pending') {
    if (!acceptHeld) elements.push(button({ actionId: ACTION_IDS.accept, text: 'Accept', style: 'primary', value }));
    // Decline opens a modal asking for the reason, which is its own confirmation.
    if (held !== 'handoff.decline') elements.push(button({ actionId: ACTION_IDS.decline, text: 'Decline', value }));
  }
  const runActive = Boolean(thread.run && !isFinishedRun(thread.run.status));
  const runHeld = held === 'handoff.run' || (acceptHeld && thread.status === 'pending');
  if (
    audience === 'recipient' &&
    (thread.status === 'pending' || thread.status === 'accepted') &&
    !runActive &&
    !runHeld
  ) {
    elements.push(button({ actionId: ACTION_IDS.handToAgent, text: 'Hand to my agent', value }));
  }
  if (audience === 'recipient' && thread.status === 'accepted' && runActive && !thread.run?.stop_requested) {
    elements.push(button({ actionId: ACTION_IDS.stopAgent, text: 'Stop', style: 'danger', value }));
  }
  if (audience === 'recipient' && thread.status === 'accepted' && held !== 'handoff.complete') {
    elements.push(button({ actionId: ACTION_IDS.complete, text: 'Complete', style: 'primary', value }));
  }
  if (thread.status === 'pending' || thread.status === 'accepted') {
    elements.push(button({ actionId: ACTION_IDS.reply, text: 'Reply', value }));
  }
  if (audience === 'sender' && thread.status === 'expired') {
    elements.push(button({ actionId: TIMER_ACTION_IDS.resend, text: 'Resend', style: 'primary', value }));
  }
  elements.push(button({ actionId: ACTION_IDS.openInbox, text: 'View in inbox', url: input.inboxUrl }));
  elements.push(openWebInboxButton());
  return actions(elements, BLOCK_IDS.actions);
}

/** Where the handoff stands for this reader, in one bold line. */
function headline(input: DmInput, audience: DmAudience): string {
  const { thread, recipient, sender } = input;
  const them = audience === 'recipient' ? nameOf(sender, thread.from) : nameOf(recipient, thread.to);
  const line: Record<ThreadStatus, string> = {
    pending: audience === 'recipient' ? 'Waiting for you to accept or decline' : `Waiting for ${them} to accept`,
    accepted: audience === 'recipient' ? 'Accepted — complete it when you are done' : `Accepted — ${them} is on it`,
    completed: 'Completed',
    declined: 'Declined',
    cancelled: 'Cancelled',
    expired:
      audience === 'recipient'
        ? 'Expired — nobody acted on it in time'
        : 'Expired — nobody acted on it in time; you can resend it',
    unclaimed: `Waiting for someone (${thread.to_target ?? thread.to}) to claim it`,
    awaiting_approval: 'Waiting for approval',
    rejected: 'Rejected by an approver',
  };
  if (thread.status === 'awaiting_approval') {
    const pending = thread.approvals?.find((a) => a.action === 'handoff.create' && a.status === 'pending');
    const who = pending ? approversMrkdwn(pending.approvers) : '';
    return `*Status: Waiting for approval${who ? ` by ${who}` : ''}*`;
  }
  // A change a policy holds (an accept, a complete …) shows from the thread itself, so every redraw keeps saying it
  // (a notice drawn once after the click was wiped by the sync of the approval's own event, whichever ran last).
  if (thread.status === 'pending' && thread.answered_at) {
    line.pending =
      audience === 'recipient'
        ? 'Answered — you replied; accept it if there is more to do'
        : `Answered — ${them} replied (below)`;
  }
  const held = heldChange(thread);
  if (held) {
    const reader = audience === 'recipient' ? thread.to : thread.from;
    const whose =
      held.actor === reader ? 'your' : `${nameOf(held.actor === thread.to ? recipient : sender, held.actor)}'s`;
    const what = held.action.replace(/^handoff\./, '');
    return `*Status: ${escapeMrkdwn(line[thread.status])} · ${escapeMrkdwn(whose)} ${what} waits for approval by ${approversMrkdwn(held.approvers)}*`;
  }
  return `*Status: ${escapeMrkdwn(line[thread.status])}*`;
}

/** Every transition: who acted, from where, and when. */
function historyLines(input: DmInput): string[] {
  const { thread, sender, recipient } = input;
  const history: Array<Pick<StatusChange, 'status' | 'by' | 'at'> & { via?: string }> = thread.status_history.length
    ? [...thread.status_history]
    : [{ status: 'pending', by: thread.from, at: thread.created_at }];
  // A thread written before status_history was complete still shows its current state, from its timestamps.
  if (history[history.length - 1].status !== thread.status) {
    const at = {
      pending: thread.created_at,
      unclaimed: thread.created_at,
      accepted: thread.accepted_at,
      completed: thread.completed_at,
      declined: thread.declined_at,
      cancelled: thread.cancelled_at,
      awaiting_approval: thread.created_at,
      rejected: thread.rejected_at ?? null,
      expired: thread.expired_at ?? null,
    }[thread.status];
    history.push({
      status: thread.status,
      by: thread.status === 'cancelled' ? thread.from : thread.to,
      at: at ?? thread.updated_at,
    });
  }
  const actor = (by: string) =>
    by === thread.to
      ? personMrkdwn(recipient, thread.to)
      : by === thread.from
        ? personMrkdwn(sender, thread.from)
        : inlineCode(by, 140);
  return history.slice(-CAP.history).map((change) => {
    // A handoff to a role, skill or owner becomes pending when a candidate claims it.
    const claimed = change.status === 'pending' && change.by !== thread.from && change.by === thread.claimed_by;
    const { emoji, verb } = claimed
      ? { emoji: ':raised_hand:', verb: 'Claimed' }
      : (STATUS_VERB[change.status] ?? { emoji: ':grey_question:', verb: escapeLine(String(change.status), 20) });
    // A timer's change (expiry) was made by the relay itself, not by a person on a surface.
    if (change.status === 'expired') return `${emoji} ${verb} · ${slackDate(new Date(change.at))}`;
    // A completion the recipient's agent reported names the run, not the transport it used.
    const run = thread.run;
    if (change.status === 'completed' && change.by === thread.to && run?.status === 'succeeded' && run.runner)
      return `${emoji} ${verb} by ${actor(change.by)}'s agent on ${inlineCode(run.runner, 60)} · ${slackDate(new Date(change.at))}`;
    const via = change.via ? ` via ${surfaceName(change.via)}` : '';
    return `${emoji} ${verb} by ${actor(change.by)}${via} · ${slackDate(new Date(change.at))}`;
  });
}

/** "Running on @bob's agent · started 10:05 · last update 10:07: running tests…", or how the latest run ended. */
function runLine(input: DmInput): string | null {
  const { thread, recipient } = input;
  const run = thread.run;
  if (!run) return null;
  const agent = `${personMrkdwn(recipient, thread.to)}'s agent${run.runner ? ` (${escapeLine(run.runner, 60)})` : ''}`;
  const update = run.last_update_at
    ? ` · last update ${slackDate(new Date(run.last_update_at))}${run.last_line ? `: ${escapeLine(run.last_line, 200)}` : ''}`
    : '';
  switch (run.status) {
    case 'queued':
      return `:robot_face: Handed to ${personMrkdwn(recipient, thread.to)}'s agent · waiting for a runner${run.stop_requested ? ' · stopping…' : ''}`;
    case 'running':
      return `:robot_face: Running on ${agent} · started ${slackDate(new Date(run.started_at ?? run.queued_at))}${update}${run.stop_requested ? ' · stopping…' : ''}`;
    case 'succeeded':
      return `:robot_face: ${agent} finished · ${slackDate(new Date(run.finished_at ?? run.queued_at))}`;
    case 'failed':
      return `:warning: ${agent} failed · ${slackDate(new Date(run.finished_at ?? run.queued_at))} (see the thread)`;
    case 'stopped':
      return `:octagonal_sign: ${agent} was stopped · ${slackDate(new Date(run.finished_at ?? run.queued_at))}`;
  }
}

function stateBlocks(input: DmInput, audience: DmAudience): SlackBlock[] {
  const { thread, inboxUrl } = input;
  const answered = thread.answered_at
    ? [
        `:speech_balloon: Answered by ${personMrkdwn(input.recipient, thread.to)} · ${slackDate(new Date(thread.answered_at))}`,
      ]
    : [];
  const blocks = [
    section([headline(input, audience), ...historyLines(input), ...answered].join('\n'), BLOCK_IDS.status),
  ];
  const run = runLine(input);
  if (run) blocks.push(context(run));
  if (input.timerLine) blocks.push(context(input.timerLine));
  if (thread.status === 'completed' && thread.completed_summary) {
    const { text, cut } = escapeWithin(thread.completed_summary, CAP.result);
    blocks.push(section(`*Result*\n${text}${readMore(cut, inboxUrl, 'result')}`));
  }
  if (thread.status === 'declined' && thread.decline_reason) {
    const { text, cut } = quote(thread.decline_reason, CAP.reason);
    blocks.push(section(`*Why it was declined*\n${text}${readMore(cut, inboxUrl, 'reason')}`));
  }
  if (thread.status === 'rejected' && thread.reject_reason) {
    const { text, cut } = quote(thread.reject_reason, CAP.reason);
    blocks.push(section(`*Why it was rejected*\n${text}${readMore(cut, inboxUrl, 'reason')}`));
  }
  if (thread.status === 'cancelled' && thread.cancel_reason) {
    const { text, cut } = quote(thread.cancel_reason, CAP.reason);
    blocks.push(section(`*Why it was cancelled*\n${text}${readMore(cut, inboxUrl, 'reason')}`));
  }
  return blocks;
}

function headerText(input: DmInput, audience: DmAudience): string {
  const { thread, sender, recipient } = input;
  const [prefix, agent, handle] =
    audience === 'recipient' ? ['Handoff from', sender, thread.from] : ['Your handoff to', recipient, thread.to];
  // The handle always shows whole; a long name gives way.
  const room = SLACK_LIMITS.headerText - prefix.length - handle.length - 4;
  const name = agent?.name && room >= 8 ? `${truncate(agent.name.replace(/\s+/g, ' '), room)} (${handle})` : handle;
  return plainSafe(`${prefix} ${name}`);
}

/** An approver as mrkdwn: a Slack mention when there is a Slack user, else the handle in code. */
/** Each approver once (by label), as approverMrkdwn, comma-separated. */
export function approversMrkdwn(approvers: ReadonlyArray<{ label: string; slack_user_id: string | null }>): string {
  return [...new Map(approvers.map((a) => [a.label, approverMrkdwn(a)])).values()].join(', ');
}

export function approverMrkdwn(approver: { label: string; slack_user_id: string | null }): string {
  if (approver.slack_user_id && SLACK_USER_ID.test(approver.slack_user_id)) return `<@${approver.slack_user_id}>`;
  return inlineCode(approver.label, 140);
}

/** The handoff's header and content (summary, question, proposed action) as `audience` reads it, without state or buttons. */
export function handoffContentBlocks(input: DmInput, audience: DmAudience = 'recipient'): SlackBlock[] {
  return contentBlocks(input, audience);
}

function contentBlocks(input: DmInput, audience: DmAudience): SlackBlock[] {
  const { thread, sender, recipient, inboxUrl } = input;
  const blocks: SlackBlock[] = [header(headerText(input, audience))];
  if (input.notice) blocks.push(context(`:information_source: ${escapeWithin(input.notice, CAP.notice).text}`));
  blocks.push(
    context(
      `From ${personMrkdwn(sender, thread.from)} ${inlineCode(thread.from, 140)} to ${personMrkdwn(recipient, thread.to)} ${inlineCode(thread.to, 140)}`,
    ),
  );
  const summary = escapeWithin(thread.summary, CAP.summary);
  blocks.push(
    section(`${INTENT_LABEL[audience][thread.intent]}\n${summary.text}${readMore(summary.cut, inboxUrl, 'summary')}`),
  );
  if (thread.question) {
    const question = quote(thread.question, CAP.question);
    blocks.push(section(`*Question*\n${question.text}${readMore(question.cut, inboxUrl, 'question')}`));
  }
  const action = thread.proposed_action;
  if (action) {
    const description = escapeWithin(action.description, CAP.description);
    blocks.push(
      section(
        `*Proposed action*\n${description.text}${readMore(description.cut, inboxUrl, 'description')}${targetFiles(action.target_files)}`,
      ),
    );
    const rationale = escapeWithin(action.rationale, CAP.rationale);
    blocks.push(section(`*Rationale*\n${rationale.text}${readMore(rationale.cut, inboxUrl, 'rationale')}`));
    if (action.suggested_diff) {
      const diff = fencedLines(action.suggested_diff, CAP.suggestedDiff);
      const note = diff.cut
        ? `\n_Diff shortened (${diff.lines} of ${diff.totalLines} lines)._ ${link(inboxUrl, 'View the full diff')}`
        : '';
      blocks.push(section(`*Suggested diff*\n${diff.text}${note}`));
    }
  }
  return blocks;
}

/** Target files as inline code, as many as fit in CAP.targetFiles characters, then "+N more". */
function targetFiles(files: readonly string[]): string {
  if (files.length === 0) return '';
  const shown: string[] = [];
  let used = 0;
  for (const file of files) {
    const code = inlineCode(file, 200);
    if (used + code.length + 2 > CAP.targetFiles - 20) break;
    shown.push(code);
    used += code.length + 2;
  }
  const more = files.length - shown.length;
  return `\n*Files:* ${shown.join(', ')}${more ? `${shown.length ? ' ' : ''}+${more} more` : ''}`;
}

function moreLine(count: number, what: string, inboxUrl: string): SlackBlock {
  return context(`+${count} more ${what}${count === 1 ? '' : 's'}: ${link(inboxUrl, 'view them in the inbox')}`);
}

/** The notification text: plain, short and meaningful on a lock screen. */
function fallbackText(input: DmInput, audience: DmAudience): string {
  const { thread, sender, recipient } = input;
  const summary = truncate(thread.summary.replace(/\s+/g, ' ').trim(), 150);
  const state = STATUS_VERB[thread.status].verb;
  let text: string;
  if (audience === 'recipient') {
    const verb = {
      inform: 'sent you a handoff',
      ask_question: 'asks you a question',
      propose_action: 'proposes an action',
    }[thread.intent];
    const base = `${nameOf(sender, thread.from)} (${thread.from}) ${verb}: ${summary}`;
    text = thread.status === 'pending' ? base : `${state} · ${base}`;
  } else {
    const waiting =
      thread.status === 'pending' && thread.answered_at
        ? 'answered'
        : thread.status === 'pending'
          ? 'waiting to be accepted'
          : thread.status === 'unclaimed'
            ? 'waiting to be claimed'
            : state.toLowerCase();
    text = `Your handoff to ${nameOf(recipient, thread.to)}: ${waiting} · ${summary}`;
  }
  return escapeWithin(text, FALLBACK_MAX).text;
}

export function handoffDm(input: DmInput): SlackMessage {
  const audience = input.audience ?? 'recipient';
  const { thread, inboxUrl } = input;
  const content = contentBlocks(input, audience);
  const state = stateBlocks(input, audience);
  const tail = [
    actionButtons(input, audience),
    context(`Thread ${inlineCode(thread._id, 80)} · sent ${slackDate(thread.created_at)}`),
  ];

  // Artifacts share what the fixed parts leave; with both lists, the result's artifacts get half first.
  const fixed = [...content, divider(), ...state, ...tail];
  const moreLines = (thread.artifacts.length ? 1 : 0) + (thread.completion_artifacts.length ? 1 : 0);
  let chars = SLACK_LIMITS.messageTextBudget - textLength(fixed) - MORE_LINE * moreLines;
  let room = SLACK_LIMITS.messageBlocks - fixed.length - moreLines;
  const results = thread.status === 'completed' ? thread.completion_artifacts : [];
  const both = results.length > 0 && thread.artifacts.length > 0;
  const resultFill = artifactBlocks(
    results,
    inboxUrl,
    both ? Math.floor(chars / 2) : chars,
    both ? Math.floor(room / 2) : room,
  );
  chars -= resultFill.chars;
  room -= resultFill.blocks.length;
  const handoffFill = artifactBlocks(thread.artifacts, inboxUrl, chars, room);

  const blocks = [...content, ...handoffFill.blocks];
  if (handoffFill.shown < thread.artifacts.length)
    blocks.push(moreLine(thread.artifacts.length - handoffFill.shown, 'artifact', inboxUrl));
  blocks.push(divider(), ...state, ...resultFill.blocks);
  if (resultFill.shown < results.length)
    blocks.push(moreLine(results.length - resultFill.shown, 'result artifact', inboxUrl));
  blocks.push(...tail);
  return { text: fallbackText(input, audience), blocks };
}
