// "Open web inbox": the button on the handoff DM and the App Home, and the modal a click opens with a fresh one-time
// sign-in link for the Slack-linked teammate (the link is made per click: a URL fixed in a message would be stale
// ten minutes later, and usable by anyone the message is forwarded to).
import { actions, button, context, section, type SlackBlock } from './block-kit';

export const WEB_INBOX_ACTION_IDS = {
  /** The button: the listener makes a link and opens the modal. */
  open: 'web_inbox_open',
  /** The modal's link button (Slack still sends an action for a URL button, which only needs an ack). */
  signIn: 'web_inbox_sign_in',
} as const;

export const WEB_INBOX_BLOCK_ID = 'web_inbox';

/** The button, as an element of an actions block. */
export function openWebInboxButton(): SlackBlock {
  return button({ actionId: WEB_INBOX_ACTION_IDS.open, text: 'Open web inbox', value: 'open' });
}

/** The button in an actions block of its own (the App Home). */
export function openWebInboxBlock(): SlackBlock {
  return actions([openWebInboxButton()], WEB_INBOX_BLOCK_ID);
}

function modal(blocks: SlackBlock[]) {
  return {
    type: 'modal' as const,
    callback_id: 'web_inbox_link',
    title: { type: 'plain_text' as const, text: 'Web inbox' },
    close: { type: 'plain_text' as const, text: 'Close' },
    blocks,
  };
}

/** The modal with the link: one click signs this person's browser in. */
export function webInboxLinkModal(url: string, handle: string) {
  return modal([
    section(`Open your handoff inbox in the browser as \`${handle}\`.`),
    actions(
      [button({ actionId: WEB_INBOX_ACTION_IDS.signIn, text: 'Sign in to the web inbox', url, style: 'primary' })],
      'web_inbox_sign_in',
    ),
    context('The link works once, for ten minutes. Do not forward it: it signs in as you.'),
  ]);
}

/** The modal for a Slack user with no teammate. */
export function webInboxUnlinkedModal() {
  return modal([
    section(
      'Your Slack account is not linked to a handoff-relay teammate, so there is no inbox to open. Run `/handoff link` first.',
    ),
  ]);
}
