// The recipient's DM for one handoff: a pure function of the thread, rendered anew on every change.
import type { AgentDoc, ThreadDoc } from '../../relay-core/documents';
import type { Artifact } from '../../relay-core/schemas';
import { codeBlock, cutOnLines, escapeMrkdwn, linkUrl, slackDate, truncate } from './mrkdwn';

import type { SlackBlock, SlackMessage } from './block-kit';

export type { SlackBlock, SlackMessage } from './block-kit';

export const ACTION_IDS = {
  accept: 'handoff_accept',
  decline: 'handoff_decline',
  complete: 'handoff_complete',
  reply: 'handoff_reply',
  openInbox: 'handoff_open_inbox',
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
}

const SECTION_MAX = 3000;
/** Slack refuses a message whose blocks hold about 12k characters of text in total; keep a margin. */
const TEXT_BUDGET = 11_500;
const MAX_BLOCKS = 50;
const INTENT_LABEL: Record<ThreadDoc['intent'], string> = {
  inform: ':information_source: *For your information*',
  ask_question: ':question: *Asks you a question*',
  propose_action: ':hammer_and_wrench: *Proposes an action for you*',
};

function section(text: string): SlackBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: truncate(text, SECTION_MAX) } };
}

function context(text: string): SlackBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text: truncate(text, SECTION_MAX) }] };
}

function who(agent: AgentDoc | null, handle: string): string {
  return agent?.slack_user_id ? `<@${agent.slack_user_id}>` : `*${escapeMrkdwn(agent?.name ?? handle)}*`;
}

function fencedDiff(diff: string, room: number, inboxUrl: string): string {
  const { text, cut } = cutOnLines(diff, room);
  return codeBlock(text) + (cut ? `\n_Diff shortened._ <${linkUrl(inboxUrl)}|View the full diff>` : '');
}

export function renderArtifact(artifact: Artifact, inboxUrl: string): string {
  switch (artifact.type) {
    case 'file_diff':
      return `:page_facing_up: *Diff* \`${escapeMrkdwn(truncate(artifact.path, 300))}\`\n${fencedDiff(artifact.diff, 2400, inboxUrl)}`;
    case 'file_ref': {
      const lines = artifact.lines ? ` lines ${artifact.lines}` : '';
      const sha = artifact.git_sha ? ` @ \`${artifact.git_sha.slice(0, 12)}\`` : '';
      return `:bookmark_tabs: *File* \`${escapeMrkdwn(truncate(artifact.path, 1000))}\`${lines}${sha}`;
    }
    case 'test_command': {
      const cwd = artifact.cwd ? ` (in \`${escapeMrkdwn(truncate(artifact.cwd, 300))}\`)` : '';
      return `:test_tube: *Test command*${cwd}\n${codeBlock(truncate(artifact.command, 2400))}`;
    }
    case 'api_contract': {
      const link = artifact.schema_url ? `<${linkUrl(artifact.schema_url)}|${escapeMrkdwn(truncate(artifact.schema_url, 200))}>` : '';
      const inline = artifact.inline ? `\n${codeBlock(cutOnLines(artifact.inline, 1500).text)}` : '';
      return `:scroll: *API contract* ${link}${inline}`;
    }
    case 'link':
      return `:link: <${linkUrl(artifact.url)}|${escapeMrkdwn(truncate(artifact.title ?? artifact.url, 300))}>`;
  }
}

function statusLine(input: DmInput): string {
  const { thread, recipient } = input;
  const last = thread.status_history[thread.status_history.length - 1];
  const via = last ? ` via ${last.via === 'slack' ? 'Slack' : last.via.toUpperCase()}` : '';
  switch (thread.status) {
    case 'pending':
      return ':hourglass_flowing_sand: Waiting for you to accept';
    case 'accepted':
      return `:white_check_mark: Accepted by ${who(recipient, thread.to)} ${slackDate(thread.accepted_at!)}${via}`;
    case 'completed':
      return `:tada: Completed by ${who(recipient, thread.to)} ${slackDate(thread.completed_at!)}${via}`;
    case 'declined':
      return `:no_entry_sign: Declined by ${who(recipient, thread.to)} ${slackDate(thread.declined_at!)}${via}`;
    case 'cancelled':
      return `:wastebasket: Cancelled by the sender ${slackDate(thread.cancelled_at!)}${via}`;
  }
}

function buttonValue(thread: ThreadDoc): string {
  return JSON.stringify({ t: thread._id, s: thread.status });
}

function actions(input: DmInput): SlackBlock {
  const { thread } = input;
  const elements: SlackBlock[] = [];
  const recipientView = (input.audience ?? 'recipient') === 'recipient';
  const button = (actionId: string, text: string) => ({ type: 'button', action_id: actionId, text: { type: 'plain_text', text }, value: buttonValue(thread) });
  if (recipientView && thread.status === 'pending') {
    elements.push({
      type: 'button',
      action_id: ACTION_IDS.accept,
      style: 'primary',
      text: { type: 'plain_text', text: 'Accept' },
      value: buttonValue(thread),
    });
  }
  if (recipientView && thread.status === 'pending') elements.push(button(ACTION_IDS.decline, 'Decline'));
  if (recipientView && thread.status === 'accepted') {
    elements.push({
      type: 'button',
      action_id: ACTION_IDS.complete,
      style: 'primary',
      text: { type: 'plain_text', text: 'Complete' },
      value: buttonValue(thread),
    });
  }
  if (thread.status === 'pending' || thread.status === 'accepted') elements.push(button(ACTION_IDS.reply, 'Reply'));
  elements.push({ type: 'button', action_id: ACTION_IDS.openInbox, text: { type: 'plain_text', text: 'View in inbox' }, url: input.inboxUrl });
  return { type: 'actions', block_id: 'handoff_actions', elements };
}

export function handoffDm(input: DmInput): SlackMessage {
  const { thread, sender, inboxUrl } = input;
  const senderName = sender?.name ?? thread.from;
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(`Handoff from ${senderName}`, 150), emoji: true } },
    ...(input.notice ? [context(escapeMrkdwn(input.notice))] : []),
    context(`${who(sender, thread.from)} \`${escapeMrkdwn(thread.from)}\` → \`${escapeMrkdwn(thread.to)}\``),
    section(`${INTENT_LABEL[thread.intent]}\n${escapeMrkdwn(truncate(thread.summary, 2800))}`),
  ];
  // question and proposed_action never come together (intent rules), so these caps keep the fixed part under ~10k.
  if (thread.question) blocks.push(section(`*Question*\n>${escapeMrkdwn(truncate(thread.question, 2000)).replace(/\n/g, '\n>')}`));
  if (thread.proposed_action) {
    const action = thread.proposed_action;
    const files = truncate(action.target_files.map((f) => `\`${f}\``).join(', '), 800);
    blocks.push(section(`*Proposed action*\n${escapeMrkdwn(truncate(action.description, 1200))}\n*Files:* ${escapeMrkdwn(files)}`));
    blocks.push(section(`*Rationale*\n${escapeMrkdwn(truncate(action.rationale, 2000))}`));
    if (action.suggested_diff) blocks.push(section(`*Suggested diff*\n${fencedDiff(action.suggested_diff, 1800, inboxUrl)}`));
  }

  const tail: SlackBlock[] = [
    { type: 'divider' },
    section(statusLine(input)),
    actions(input),
    context(`Thread \`${thread._id}\` · sent ${slackDate(thread.created_at)}`),
  ];
  const used = (list: SlackBlock[]) => list.reduce((sum, block) => sum + textLength(block), 0);
  let budget = TEXT_BUDGET - used(blocks) - used(tail) - 200; // room for the "more artifacts" line
  const room = MAX_BLOCKS - blocks.length - tail.length - 1;
  let shown = 0;
  for (const artifact of thread.artifacts) {
    const block = section(renderArtifact(artifact, inboxUrl));
    const cost = used([block]);
    if (shown >= room || cost > budget) break;
    blocks.push(block);
    budget -= cost;
    shown += 1;
  }
  if (shown < thread.artifacts.length) {
    blocks.push(context(`+${thread.artifacts.length - shown} more artifact(s): <${linkUrl(inboxUrl)}|view them in the inbox>`));
  }
  blocks.push(...tail);

  const text = truncate(`Handoff from ${senderName} (${thread.from}): ${thread.summary}`, 3000);
  return { text, blocks };
}

/** Characters of text a block holds, counted the way Slack's total-length limit counts them. */
function textLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + textLength(v), 0);
  if (!value || typeof value !== 'object') return 0;
  return Object.entries(value as Record<string, unknown>).reduce(
    (sum, [key, v]) => sum + (key === 'text' && typeof v === 'string' ? v.length : textLength(v)),
    0,
  );
}
