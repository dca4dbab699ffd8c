// One thread message as a reply under the handoff's DM: body and artifacts, within Slack's limits.
import type { AgentDoc, MessageDoc } from '../../relay-core/documents';
import { context, escapeMrkdwn, section, slackDate, truncate, type SlackMessage } from './block-kit';
import { renderArtifact } from './handoff-dm';

export interface ThreadReplyInput {
  message: MessageDoc;
  author: AgentDoc | null;
  inboxUrl: string;
}

export function threadReplyMessage(input: ThreadReplyInput): SlackMessage {
  const { message, author, inboxUrl } = input;
  const name = author?.name ?? message.from;
  const blocks = [
    context(`*${escapeMrkdwn(truncate(name, 200))}* \`${escapeMrkdwn(message.from)}\` · ${slackDate(message.created_at)}`),
    section(escapeMrkdwn(truncate(message.body, 2800))),
    ...message.artifacts.slice(0, 10).map((a) => section(renderArtifact(a, inboxUrl))),
  ];
  return { text: truncate(`${name}: ${message.body}`, 300), blocks };
}
