// The card of an unclaimed handoff (in the bound channel, or in each candidate's DM): who sent what to which
// target, with Claim; once claimed or cancelled every copy is redrawn with who took it and when.
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { artifactBlocks } from './artifacts';
import {
  actions,
  button,
  context,
  section,
  SLACK_LIMITS,
  textLength,
  type SlackBlock,
  type SlackMessage,
} from './block-kit';
import { ACTION_IDS } from './handoff-dm';
import { personMrkdwn } from './handoff-dm';
import { escapeLine, escapeWithin, inlineCode, link, slackDate, truncate } from './mrkdwn';

export const CLAIM_ACTION_IDS = { claim: 'handoff_claim' } as const;

export const CLAIM_BLOCK_IDS = { status: 'handoff_claim_status', actions: 'handoff_claim_actions' } as const;

export interface ClaimCardInput {
  thread: ThreadDoc;
  sender: AgentDoc | null;
  /** Who claimed it (once claimed). */
  claimer: AgentDoc | null;
  /** The candidates' cards, by handle (for mentions); a candidate without one shows its handle. */
  candidates: ReadonlyMap<string, AgentDoc | null>;
  /** The thread's inbox page (View in inbox, and where an artifact too long for the card is read). */
  inboxUrl: string;
}

const SUMMARY_MAX = 1_500;
const INTENT_LINE: Record<ThreadDoc['intent'], string> = {
  inform: 'shares context',
  ask_question: 'asks a question',
  propose_action: 'proposes an action',
};

/** The value the Claim button carries: the thread and the status the card showed. */
export function claimButtonValue(thread: Pick<ThreadDoc, '_id'>): string {
  return JSON.stringify({ t: thread._id, s: 'unclaimed' });
}

/** One line: unclaimed (with Claim), claimed by whom and when, or how it ended before anyone claimed it. */
function statusLine({ thread, claimer, sender }: ClaimCardInput): string {
  if (thread.claimed_by) {
    return `:raised_hand: *Claimed by ${personMrkdwn(claimer, thread.claimed_by)}* · ${slackTime(thread.claimed_at ?? thread.updated_at)}`;
  }
  if (thread.status === 'unclaimed')
    return ':hourglass_flowing_sand: *Unclaimed* — the first to press Claim takes it on';
  if (thread.status === 'expired')
    return `:hourglass: *Expired* before anyone claimed it · ${slackTime(thread.expired_at ?? thread.updated_at)}`;
  if (thread.to !== (thread.to_target ?? thread.to)) {
    return `:arrows_counterclockwise: *Handed to ${inlineCode(thread.to, 140)} by ${personMrkdwn(sender, thread.from)}* before anyone claimed it · ${slackTime(thread.updated_at)}`;
  }
  return `:wastebasket: *${escapeLine(
    thread.status.replace(/^./, (c) => c.toUpperCase()),
    20,
  )} by ${personMrkdwn(sender, thread.from)}* before anyone claimed it · ${slackTime(thread.updated_at)}`;
}

/** "Today at 10:05" in the reader's own time zone (Slack renders the date token), with a UTC fallback. */
const slackTime = slackDate;

export function claimCard(input: ClaimCardInput): SlackMessage {
  const { thread, sender, candidates } = input;
  const target = thread.to_target ?? thread.to;
  const who = personMrkdwn(sender, thread.from);
  const summary = escapeWithin(thread.summary, SUMMARY_MAX);
  const names = (thread.candidates ?? []).map((handle) => personMrkdwn(candidates.get(handle) ?? null, handle));
  const head: SlackBlock[] = [
    section(`:inbox_tray: ${who} ${INTENT_LINE[thread.intent]} for ${inlineCode(target, 200)}`),
    section(`>${summary.text.replace(/\n/g, '\n>')}${summary.cut ? '\n_(cut; the claimer sees all of it)_' : ''}`),
  ];
  const elements: SlackBlock[] = [];
  if (thread.status === 'unclaimed')
    elements.push(
      button({ actionId: CLAIM_ACTION_IDS.claim, text: 'Claim', style: 'primary', value: claimButtonValue(thread) }),
    );
  elements.push(button({ actionId: ACTION_IDS.openInbox, text: 'View in inbox', url: input.inboxUrl }));
  const tail: SlackBlock[] = [
    section(statusLine(input), CLAIM_BLOCK_IDS.status),
    actions(elements, CLAIM_BLOCK_IDS.actions),
    context(
      `Candidates: ${names.join(', ') || 'none'} · sent ${slackDate(thread.created_at)} · thread ${inlineCode(thread._id, 80)}`,
    ),
  ];
  // Every artifact as the DM shows it, in what the fixed parts leave; the rest are counted with a link.
  const fixed = [...head, ...tail];
  const fill = artifactBlocks(
    thread.artifacts,
    input.inboxUrl,
    SLACK_LIMITS.messageTextBudget - textLength(fixed) - 160,
    SLACK_LIMITS.messageBlocks - fixed.length - 1,
  );
  const blocks: SlackBlock[] = [...head, ...fill.blocks];
  if (fill.shown < thread.artifacts.length)
    blocks.push(
      context(
        `+${thread.artifacts.length - fill.shown} more artifacts: ${link(input.inboxUrl, 'view them in the inbox')}`,
      ),
    );
  blocks.push(...tail);
  const state = thread.claimed_by
    ? `claimed by ${input.claimer?.name ?? thread.claimed_by}`
    : thread.status === 'unclaimed'
      ? 'unclaimed'
      : thread.status;
  const text = escapeWithin(
    truncate(
      `Handoff for ${target} (${state}) from ${sender?.name ?? thread.from}: ${thread.summary.replace(/\s+/g, ' ')}`,
      600,
    ),
    300,
  ).text;
  return { text, blocks };
}
