// One thread message as a Slack reply under the handoff's DM: who wrote it, from where and when, body, artifacts.
import type { AgentDoc, MessageDoc } from '../../relay-core/domain/documents';
import { artifactBlocks } from './artifacts';
import { context, section, SLACK_LIMITS, textLength, type SlackBlock, type SlackMessage } from './block-kit';
import { personMrkdwn, surfaceName } from './handoff-dm';
import { escapeWithin, inlineCode, link, slackDate, truncate } from './mrkdwn';

export interface ThreadReplyInput {
  message: MessageDoc;
  author: AgentDoc | null;
  inboxUrl: string;
}

const BODY_MAX = 2800;
const MORE_LINE = 160;

export function threadReplyMessage(input: ThreadReplyInput): SlackMessage {
  const { message, author, inboxUrl } = input;
  const byline = context(
    `:speech_balloon: ${personMrkdwn(author, message.from)} ${inlineCode(message.from, 140)} via ${surfaceName(message.via)} · ${slackDate(message.created_at)}`,
  );
  const fixed: SlackBlock[] = [byline];
  if (message.body.trim()) {
    const body = escapeWithin(message.body, BODY_MAX);
    fixed.push(section(`${body.text}${body.cut ? `\n${link(inboxUrl, 'Read the whole message in the inbox')}` : ''}`));
  }
  const more = message.artifacts.length ? 1 : 0;
  const fill = artifactBlocks(
    message.artifacts,
    inboxUrl,
    SLACK_LIMITS.messageTextBudget - textLength(fixed) - MORE_LINE * more,
    SLACK_LIMITS.messageBlocks - fixed.length - more,
  );
  const blocks = [...fixed, ...fill.blocks];
  const hidden = message.artifacts.length - fill.shown;
  if (hidden > 0)
    blocks.push(
      context(`+${hidden} more artifact${hidden === 1 ? '' : 's'}: ${link(inboxUrl, 'view them in the inbox')}`),
    );

  const name = truncate((author?.name ?? message.from).replace(/\s+/g, ' '), 60);
  const gist = message.body.trim()
    ? truncate(message.body.replace(/\s+/g, ' ').trim(), 150)
    : `${message.artifacts.length} artifact(s)`;
  return { text: escapeWithin(`${name} replied: ${gist}`, 300).text, blocks };
}
