// `/handoff link` modals (pure builders): "linking…", then the API key with MCP client configuration, or why not.
import type { types } from '@slack/bolt';
import { codeBlock, escapeMrkdwn } from '../blocks/mrkdwn';

type ModalView = types.ModalView;

/** One paste-ready piece of client configuration: a line naming the client and transport, and the text. */
export interface SetupSnippet {
  title: string;
  text: string;
}

/** How a new teammate's agent connects to this relay; the MCP surface writes it and the composition root passes it in. */
export type ClientSetup = (teammate: { relayUrl: string; apiKey: string; handle: string }) => SetupSnippet[];

export const LINK_CALLBACK_ID = 'handoff_link_modal';

const plain = (text: string) => ({ type: 'plain_text' as const, text });
const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });
const context = (text: string) => ({ type: 'context', elements: [{ type: 'mrkdwn', text }] });

function modal(title: string, blocks: Record<string, unknown>[]): ModalView {
  return {
    type: 'modal',
    callback_id: LINK_CALLBACK_ID,
    title: plain(title),
    close: plain('Done'),
    blocks,
  } as unknown as ModalView;
}

export function linkingModal(handle: string) {
  return modal('Link to handoff-relay', [
    section(`:hourglass_flowing_sand: Creating teammate \`${escapeMrkdwn(handle)}\`…`),
  ]);
}

/** The new teammate's key and paste-ready MCP configuration; the relay never shows this key again. */
export function linkedModal(input: { handle: string; apiKey: string; snippets: SetupSnippet[] }) {
  return modal('Your handoff-relay key', [
    section(
      `:white_check_mark: Your Slack account is now teammate \`${escapeMrkdwn(input.handle)}\`. Handoffs to it arrive here as DMs.`,
    ),
    section(`*API key* (shown only now, copy it before closing this):\n${codeBlock(input.apiKey)}`),
    context(
      'The relay stores only a hash of the key. Lost it? An admin can issue a new one (`POST /admin/agents/HANDLE/keys`), which revokes this one.',
    ),
    { type: 'divider' },
    section('*Connect your agent* — use one entry per client, stdio or Streamable HTTP:'),
    ...input.snippets.map((s) => section(`*${escapeMrkdwn(s.title)}*\n${codeBlock(s.text)}`)),
  ]);
}

export function linkFailedModal(reason: string) {
  return modal('Link to handoff-relay', [
    section(`:warning: ${escapeMrkdwn(reason)}`),
    context('No teammate was created and no key was made.'),
  ]);
}
