// An approver's DM: exactly what they approve (the handoff as its recipient would see it, or the held call and its
// arguments), where the approval stands, and Approve / Reject while it is open. Pure; redrawn on every change.
import { ADMIN_ON_BEHALF, approvalsCount, type ApprovalRecord } from '../../relay-core/domain/approval';
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { stateVersion } from '../../relay-core/domain/thread-lifecycle';
import { artifactBlocks } from './artifacts';
import { actions, button, context, divider, header, section, type SlackBlock, type SlackMessage } from './block-kit';
import { actionWord, threadTitle } from './change-notices';
import { approverMrkdwn, approversMrkdwn, handoffContentBlocks, personMrkdwn, surfaceName } from './handoff-dm';
import { escapeLine, escapeWithin, inlineCode, plainSafe, slackDate, truncate } from './mrkdwn';

export const APPROVAL_ACTION_IDS = {
  approve: 'approval_approve',
  reject: 'approval_reject',
} as const;

export const APPROVAL_BLOCK_IDS = {
  status: 'approval_status',
  actions: 'approval_actions',
} as const;

/** What an Approve / Reject button carries: the approval and the start of its binding (what the DM showed). */
export function approvalButtonValue(record: Pick<ApprovalRecord, 'id' | 'binding'>): string {
  return JSON.stringify({ a: record.id, b: record.binding.slice(0, 16) });
}

export interface ApprovalDmInput {
  thread: ThreadDoc;
  record: ApprovalRecord;
  sender: AgentDoc | null;
  recipient: AgentDoc | null;
  inboxUrl: string;
}

const ARGS_MAX = 1_500;

/** Whether the call can still be approved: the approval is open and the thread is where it was when asked. */
export function stillApplicable(thread: ThreadDoc, record: ApprovalRecord): boolean {
  if (record.status !== 'pending') return false;
  if (record.action === 'handoff.create') return thread.status === 'awaiting_approval';
  return stateVersion(thread) === record.state_version;
}

function who(record: ApprovalRecord, label: string | null): string {
  if (!label) return 'someone';
  if (label === 'policy') return 'the policy';
  const ref = record.approvers.find((a) => a.label === label);
  return ref ? approverMrkdwn(ref) : inlineCode(label, 140);
}

/** Whether the vote that decided the approval was cast by the admin key on the approver's behalf. */
function byAdmin(record: ApprovalRecord): boolean {
  const decisive = [...record.history].reverse().find((h) => h.what === 'approved_by' || h.what === 'rejected_by');
  return decisive?.note === ADMIN_ON_BEHALF || Boolean(decisive?.note?.endsWith(`(${ADMIN_ON_BEHALF})`));
}

function statusLine(input: ApprovalDmInput): string {
  const { thread, record } = input;
  const approvers = approversMrkdwn(record.approvers);
  const when = (d: Date | null) => (d ? ` · ${slackDate(d)}` : '');
  // An applied change in words (who, what, which handoff); a call not applied says why, as the relay put it.
  const applied =
    record.outcome?.applied && record.action !== 'handoff.create'
      ? `${personMrkdwn(record.actor === thread.to ? input.recipient : input.sender, record.actor)}'s ${actionWord(record.action)} of ${threadTitle(thread)} went through.`
      : null;
  const outcome = record.outcome ? `\n_${applied ?? escapeLine(record.outcome.message, 300)}_` : '';
  switch (record.status) {
    case 'approved':
      return `:white_check_mark: *Approved by ${who(record, record.decided_by)}${when(record.decided_at)}*${byAdmin(record) ? ' (by the admin key on their behalf)' : ''}${outcome}`;
    case 'rejected': {
      const reason = escapeWithin(record.reason ?? '', 800).text;
      return `:no_entry: *Rejected by ${who(record, record.decided_by)}${when(record.decided_at)}*${byAdmin(record) ? ' (by the admin key on their behalf)' : ''}\n>${reason.replace(/\n/g, '\n>')}${outcome}`;
    }
    case 'timed_out':
      return `:hourglass: *Timed out${when(record.decided_at)}: denied*\n_${escapeLine(record.reason ?? '', 300)}_${outcome}`;
    default:
      if (!stillApplicable(thread, record))
        return `:wastebasket: *Nothing to approve any more: the handoff is ${thread.status} now.*`;
      return [
        `*Waiting for approval* · ${approvalsCount(record)} of ${record.quorum} approved${record.approvals.length ? `: ${[...new Set(record.approvals.map((v) => who(record, v.by)))].join(', ')}` : ''} · approvers: ${approvers}`,
        ...record.approvals.map(
          (v) =>
            `:white_check_mark: ${who(record, v.by)}${when(v.at)}${v.admin ? ' (by the admin key on their behalf)' : ''}`,
        ),
        `Decide by ${slackDate(record.deadline)}${record.on_timeout === 'escalate' && record.step === 0 ? ' (then it is escalated)' : ' (then it is denied)'}.`,
      ].join('\n');
  }
}

export function approvalDm(input: ApprovalDmInput): SlackMessage {
  const { thread, record, sender, recipient, inboxUrl } = input;
  const blocks: SlackBlock[] = [];
  const isCreate = record.action === 'handoff.create';
  const actorAgent = record.actor === thread.to ? recipient : record.actor === thread.from ? sender : null;
  const actor = personMrkdwn(actorAgent, record.actor);
  const actorName = actorAgent?.name ?? record.actor;
  const what = actionWord(record.action);
  blocks.push(
    header(
      plainSafe(
        truncate(
          isCreate
            ? `Approve ${sender?.name ?? thread.from}'s handoff to ${recipient?.name ?? thread.to}: “${thread.summary.replace(/\s+/g, ' ')}”?`
            : `Approve ${actorName}'s ${what} of “${thread.summary.replace(/\s+/g, ' ')}”?`,
          140,
        ),
      ),
    ),
  );
  blocks.push(
    context(
      `Policy rule ${inlineCode(record.rule_id, 70)} asks you to approve this${record.quorum > 1 ? ` (${record.quorum} approvals needed)` : ''} · approval ${inlineCode(record.id, 60)}`,
    ),
  );
  if (!isCreate) {
    blocks.push(section(heldCallWords(record, actor, threadTitle(thread))));
    blocks.push(context('The handoff it acts on, as its recipient sees it:'));
  } else {
    blocks.push(
      context(
        `${personMrkdwn(sender, thread.from)} asks to hand this to ${personMrkdwn(recipient, thread.to)}; the handoff exactly as they will see it once approved:`,
      ),
    );
  }
  const content = handoffContentBlocks({ thread, sender, recipient, inboxUrl, audience: 'recipient' }).slice(1);
  blocks.push(...content);
  const fill = artifactBlocks(thread.artifacts, inboxUrl, 6_000, 20);
  blocks.push(...fill.blocks);
  if (fill.shown < thread.artifacts.length)
    blocks.push(context(`+${thread.artifacts.length - fill.shown} more artifacts (shown to the recipient in full)`));
  blocks.push(divider(), section(statusLine(input), APPROVAL_BLOCK_IDS.status));
  if (stillApplicable(thread, record)) {
    const value = approvalButtonValue(record);
    blocks.push(
      actions(
        [
          button({ actionId: APPROVAL_ACTION_IDS.approve, text: 'Approve', style: 'primary', value }),
          // Reject opens a modal asking for the reason, which is its own confirmation.
          button({ actionId: APPROVAL_ACTION_IDS.reject, text: 'Reject', style: 'danger', value }),
        ],
        APPROVAL_BLOCK_IDS.actions,
      ),
    );
  }
  const state = record.status === 'pending' ? 'needs your approval' : record.status.replace('_', ' ');
  const text = isCreate
    ? `Handoff from ${thread.from} to ${thread.to} ${state}: ${truncate(thread.summary.replace(/\s+/g, ' '), 150)}`
    : `${actorName}'s ${what} of “${truncate(thread.summary.replace(/\s+/g, ' '), 120)}” ${state}`;
  return { text: escapeWithin(text, 300).text, blocks };
}

/** The reminder posted under an approver's DM. */
export function approvalReminder(record: ApprovalRecord, thread?: Pick<ThreadDoc, 'summary'>): SlackMessage {
  const what =
    record.action === 'handoff.create'
      ? `a handoff from ${record.actor}`
      : `${record.actor}'s ${actionWord(record.action)}`;
  const title = thread ? ` of “${truncate(thread.summary.replace(/\s+/g, ' '), 100)}”` : '';
  const text = `Reminder: ${what}${title} still waits for your approval`;
  return {
    text: escapeWithin(text, 300).text,
    blocks: [
      section(
        `:bell: Reminder: ${escapeWithin(`${what}${title}`, 400).text} still waits for your approval; decide by ${slackDate(record.deadline)} (Approve or Reject on the message above).`,
      ),
    ],
  };
}

/** What a held call asks, in words: who wants to do what, with the text they gave (a reason, a result, a message). */
export function heldCallWords(record: ApprovalRecord, actor: string, title: string): string {
  const args = record.args as { reason?: unknown; result_summary?: unknown; body?: unknown; verdict?: unknown };
  const given = (label: string, value: unknown) =>
    typeof value === 'string' && value.trim()
      ? `\n*${label}*\n>${escapeWithin(value, ARGS_MAX).text.replace(/\n/g, '\n>')}`
      : '';
  const via = ` (via ${surfaceName(record.via)})`;
  switch (record.action) {
    case 'handoff.accept':
      return `*${actor} wants to accept ${title}*${via}${args.verdict ? ', with an acceptance check' : ''}.`;
    case 'handoff.decline':
      return `*${actor} wants to decline ${title}*${via}.${given('Their reason', args.reason)}`;
    case 'handoff.complete':
      return `*${actor} wants to mark ${title} completed*${via}.${given('Their result', args.result_summary)}`;
    case 'handoff.cancel':
      return `*${actor} wants to cancel ${title}*${via}.${given('Their reason', args.reason)}`;
    case 'message.append':
      return `*${actor} wants to send a message on ${title}*${via}:${given('Message', args.body)}`;
    case 'draft.attach':
      return `*${actor} wants to attach a draft to ${title}*${via}.${given('Note', args.body)}`;
    case 'handoff.run':
      return `*${actor} wants to hand ${title} to their agent*${via}.`;
    default:
      return `*${actor} wants to ${escapeLine(actionWord(record.action), 40)} ${title}*${via}.`;
  }
}
