// The short reply a change posts under the other party's DM (so Slack notifies them): who did what to which handoff.
import type { ApprovalRecord } from '../../relay-core/domain/approval';
import type { AgentDoc, OutboxEvent, ThreadDoc } from '../../relay-core/domain/documents';
import { context, section, type SlackBlock, type SlackMessage } from './block-kit';
import { approverMrkdwn, personMrkdwn, type DmAudience as SlackAudience } from './handoff-dm';
import { escapeWithin, inlineCode, link, truncate } from './mrkdwn';

// A thread message needs no notice: it is itself a reply under each DM (thread-sync.ts postReplies). The DM is
// redrawn as before; the notice is what makes Slack show the person something.

export interface ChangeNoticeInput {
  thread: ThreadDoc;
  event: Pick<OutboxEvent, 'id' | 'type' | 'at' | 'by'>;
  sender: AgentDoc | null;
  recipient: AgentDoc | null;
  /** Every teammate the notice may name (the event's author, an earlier recipient), by handle. */
  people: ReadonlyMap<string, AgentDoc | null>;
  inboxUrl: (audience: SlackAudience) => string;
}

/** One notice: to whom, and what it says. `under`: an earlier recipient's DM (a reassignment), else the audience's. */
export interface ChangeNotice {
  audience: SlackAudience;
  message: SlackMessage;
  under?: { channel: string; ts: string };
}

const REASON_MAX = 600;
const RESULT_MAX = 600;

/** The handoff's title as people read it: its summary's first line, quoted. */
export function threadTitle(thread: Pick<ThreadDoc, 'summary'>): string {
  const first = thread.summary.split('\n').find((l) => l.trim()) ?? thread.summary;
  return `“${escapeWithin(truncate(first.replace(/\s+/g, ' ').trim(), 100), 200).text}”`;
}

function plainTitle(thread: ThreadDoc): string {
  return `“${truncate(thread.summary.replace(/\s+/g, ' ').trim(), 100)}”`;
}

function quoted(text: string, max: number): string {
  return `>${escapeWithin(text, max).text.replace(/\n/g, '\n>')}`;
}

function plain(text: string): string {
  return escapeWithin(text, 300).text;
}

/** "accept", "decline", "complete", "message" from `handoff.accept` etc. */
export function actionWord(action: string): string {
  return action.replace(/^handoff\./, '').replace(/^append$/, 'message');
}

/** The approval an event concluded: the record whose outcome or decision was written at the event's own time. */
export function approvalOfEvent(thread: ThreadDoc, event: Pick<OutboxEvent, 'at'>): ApprovalRecord | null {
  const at = new Date(event.at).getTime();
  return (
    [...(thread.approvals ?? [])]
      .reverse()
      .find((a) => a.status !== 'pending' && a.history.some((h) => new Date(h.at).getTime() === at)) ?? null
  );
}

/** Who decided an approval, as a mention when they have a Slack user. */
export function deciderMrkdwn(record: ApprovalRecord): string {
  const label = record.decided_by;
  if (!label || label === 'policy') return 'the policy';
  const ref = record.approvers.find((a) => a.label === label);
  return ref ? approverMrkdwn(ref) : inlineCode(label, 140);
}

function notice(emoji: string, line: string, text: string, extra: SlackBlock[] = []): SlackMessage {
  return { text: plain(text), blocks: [section(`${emoji} ${line}`), ...extra] };
}

/**
 * The notices one event calls for, at most one per audience; empty when the other party need not hear of it (a
 * message, a timer step, a run's progress) or did it themselves.
 */
export function changeNotices(input: ChangeNoticeInput): ChangeNotice[] {
  const { thread, event, sender, recipient, people } = input;
  const who = (handle: string) =>
    personMrkdwn(
      people.get(handle) ?? (handle === thread.to ? recipient : handle === thread.from ? sender : null),
      handle,
    );
  const nameOf = (handle: string) =>
    (people.get(handle) ?? (handle === thread.to ? recipient : handle === thread.from ? sender : null))?.name ?? handle;
  const title = threadTitle(thread);
  const ptitle = plainTitle(thread);
  const out: ChangeNotice[] = [];
  const approval = approvalOfEvent(thread, event);
  const actorAudience = (handle: string): SlackAudience | null =>
    handle === thread.to ? 'recipient' : handle === thread.from ? 'sender' : null;
  const view = (audience: SlackAudience) => context(link(input.inboxUrl(audience), 'View it in the inbox'));
  const runAgent = thread.run?.status === 'succeeded' && thread.run.runner ? thread.run : null;

  switch (event.type) {
    case 'thread.accepted':
      if (event.by !== thread.from)
        out.push({
          audience: 'sender',
          message: notice(
            ':white_check_mark:',
            `${who(thread.to)} accepted your handoff ${title}.`,
            `${nameOf(thread.to)} accepted your handoff ${ptitle}`,
          ),
        });
      break;
    case 'thread.declined':
      if (event.by !== thread.from)
        out.push({
          audience: 'sender',
          message: notice(
            ':no_entry_sign:',
            `${who(thread.to)} declined your handoff ${title}:\n${quoted(thread.decline_reason ?? '(no reason given)', REASON_MAX)}`,
            `${nameOf(thread.to)} declined your handoff ${ptitle}: ${thread.decline_reason ?? ''}`,
          ),
        });
      break;
    case 'thread.completed': {
      if (event.by === thread.from) break;
      const by = runAgent ? `${who(thread.to)}'s agent on ${inlineCode(runAgent.runner!, 60)}` : who(thread.to);
      const result = thread.completed_summary
        ? `\n*Result:* ${escapeWithin(thread.completed_summary, RESULT_MAX).text}`
        : '';
      out.push({
        audience: 'sender',
        message: notice(
          ':tada:',
          `Your handoff ${title} was completed by ${by}.${result}`,
          `${nameOf(thread.to)}${runAgent ? "'s agent" : ''} completed your handoff ${ptitle}`,
          [view('sender')],
        ),
      });
      break;
    }
    case 'thread.cancelled':
      if (event.by !== thread.to)
        out.push({
          audience: 'recipient',
          message: notice(
            ':wastebasket:',
            `${who(thread.from)} cancelled the handoff ${title}; nothing more to do.${thread.cancel_reason ? `\n${quoted(thread.cancel_reason, REASON_MAX)}` : ''}`,
            `${nameOf(thread.from)} cancelled the handoff ${ptitle}`,
          ),
        });
      break;
    case 'thread.claimed':
      if (thread.claimed_by && thread.claimed_by !== thread.from)
        out.push({
          audience: 'sender',
          message: notice(
            ':raised_hand:',
            `${who(thread.claimed_by)} claimed your handoff ${title}.`,
            `${nameOf(thread.claimed_by)} claimed your handoff ${ptitle}`,
          ),
        });
      break;
    case 'thread.reassigned': {
      const moved = [...(thread.reassigned_from ?? [])]
        .reverse()
        .find((m) => new Date(m.at).getTime() === new Date(event.at).getTime());
      if (moved?.slack && moved.handle !== event.by)
        out.push({
          audience: 'recipient',
          under: { channel: moved.slack.channel, ts: moved.slack.ts },
          message: notice(
            ':arrows_counterclockwise:',
            `${who(event.by)} handed ${title} to ${who(thread.to)}; nothing more to do here.`,
            `${nameOf(event.by)} handed ${ptitle} to ${nameOf(thread.to)}`,
          ),
        });
      if (event.by !== thread.from)
        out.push({
          audience: 'sender',
          message: notice(
            ':arrows_counterclockwise:',
            `${who(event.by)} reassigned your handoff ${title} to ${who(thread.to)}.`,
            `${nameOf(event.by)} reassigned your handoff ${ptitle} to ${nameOf(thread.to)}`,
          ),
        });
      break;
    }
    case 'thread.rejected':
      out.push({
        audience: 'sender',
        message: notice(
          ':no_entry:',
          `${approval ? deciderMrkdwn(approval) : 'An approver'} rejected your handoff ${title} to ${who(thread.to)}; it was not delivered:\n${quoted(thread.reject_reason ?? 'rejected', REASON_MAX)}`,
          `Your handoff ${ptitle} was rejected: ${thread.reject_reason ?? ''}`,
        ),
      });
      break;
    default:
      break;
  }

  // A held change the approvers decided: its actor hears how it ended (with the other party's notice when both are
  // the same reader, in one reply).
  if (approval && event.type !== 'thread.rejected') {
    const audience = actorAudience(approval.actor);
    const what =
      approval.action === 'handoff.create' ? `handoff ${title}` : `${actionWord(approval.action)} of ${title}`;
    const pwhat =
      approval.action === 'handoff.create' ? `handoff ${ptitle}` : `${actionWord(approval.action)} of ${ptitle}`;
    let line: string | null = null;
    let text = '';
    if (approval.status === 'approved' && approval.outcome?.applied) {
      line = `:white_check_mark: Your ${what} was approved by ${deciderMrkdwn(approval)} and applied.`;
      text = `Your ${pwhat} was approved`;
    } else if (approval.status === 'approved' && approval.outcome) {
      line = `:warning: Your ${what} was approved by ${deciderMrkdwn(approval)}, but ${escapeWithin(approval.outcome.message, 300).text}.`;
      text = `Your ${pwhat} was approved but not applied`;
    } else if (approval.status === 'rejected') {
      line = `:no_entry: Your ${what} was rejected by ${deciderMrkdwn(approval)}; nothing was changed.${approval.reason ? `\n${quoted(approval.reason, REASON_MAX)}` : ''}`;
      text = `Your ${pwhat} was rejected`;
    } else if (approval.status === 'timed_out') {
      line = `:hourglass: Your ${what} was not approved in time; nothing was changed.`;
      text = `Your ${pwhat} timed out waiting for approval`;
    }
    if (audience && line) {
      const same = out.find((n) => n.audience === audience && !n.under);
      if (same) same.message.blocks.push(section(line));
      else out.push({ audience, message: { text: plain(text), blocks: [section(line)] } });
    }
  }
  return out;
}
