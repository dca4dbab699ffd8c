// The App Home tab and the `/handoff inbox` message: pure builders over pages of the caller's threads.
import type { types } from '@slack/bolt';
import { z } from 'zod';
import type { ListItem } from '../../relay-core/service/wire-views';
import { ACTION_IDS } from '../blocks/handoff-dm';
import { CLAIM_ACTION_IDS, claimButtonValue } from '../blocks/claim-card';
import { openWebInboxBlock } from '../blocks/web-inbox';
import { escapeMrkdwn, slackDate, textLength, truncate } from '../blocks/block-kit';

// The builders carry the DM's Accept / Decline / Complete / Reply buttons (ACTION_IDS, value {"t","s"}), within Slack's limits.

type HomeView = types.HomeView;

/** The Home tab's own button: re-publishes the tab at another page (value: a HomePage as JSON). */
export const HOME_ACTION_IDS = { page: 'handoff_home_page' } as const;

/** Threads per list on one Home page: two lists of 20 items of 2 blocks stay under the 100-block view limit. */
export const HOME_PAGE_SIZE = 20;
/** Items in the `/handoff inbox` message: 2 blocks each, under the 50-block message limit with room to spare. */
export const INBOX_PAGE_SIZE = 20;
/** Slack refuses a message whose blocks hold about 12k characters of text; the inbox keeps a margin. */
const INBOX_TEXT_BUDGET = 10_500;

/** Where each Home list starts: absent = newest. Carried in the paging buttons' value. */
export const homePageSchema = z
  .object({ w: z.string().max(200).optional(), s: z.string().max(200).optional() })
  .strict();
export type HomePage = z.infer<typeof homePageSchema>;

export interface ThreadPage {
  items: ListItem[];
  next_cursor: string | null;
}

type Block = Record<string, unknown>;
type Audience = 'recipient' | 'sender';

const plain = (text: string) => ({ type: 'plain_text' as const, text });
const section = (text: string): Block => ({ type: 'section', text: { type: 'mrkdwn', text: truncate(text, 3000) } });
const context = (text: string): Block => ({
  type: 'context',
  elements: [{ type: 'mrkdwn', text: truncate(text, 3000) }],
});
const header = (text: string): Block => ({ type: 'header', text: plain(truncate(text, 150)) });

const INTENT: Record<ListItem['intent'], string> = {
  inform: ':information_source: For your information',
  ask_question: ':question: Question',
  propose_action: ':hammer_and_wrench: Proposed action',
};
const STATUS: Record<ListItem['status'], string> = {
  pending: ':hourglass_flowing_sand: pending',
  accepted: ':white_check_mark: accepted',
  completed: ':tada: completed',
  declined: ':no_entry_sign: declined',
  cancelled: ':wastebasket: cancelled',
  expired: ':hourglass: expired',
  unclaimed: ':raised_hand: unclaimed',
  awaiting_approval: ':raised_hand: awaiting approval',
  rejected: ':no_entry: rejected',
};

function party(p: ListItem['sender']): string {
  return `*${escapeMrkdwn(truncate(p.name, 60))}* \`${escapeMrkdwn(truncate(p.handle, 80))}\``;
}

function button(text: string, actionId: string, value: string, style?: 'primary' | 'danger'): Block {
  return { type: 'button', action_id: actionId, text: plain(text), value, ...(style ? { style } : {}) };
}

/** The buttons the DM shows this audience for this state (decline only from pending, no transitions for the sender). */
function threadButtons(item: ListItem, audience: Audience, inboxUrl: string): Block[] {
  const value = JSON.stringify({ t: item.thread_id, s: item.status });
  const open = !['completed', 'declined', 'cancelled', 'expired'].includes(item.status);
  const buttons: Block[] = [];
  // An unclaimed handoff in a candidate's list: Claim, handled as the Claim card's (the first claim wins).
  if (audience === 'recipient' && item.status === 'unclaimed') {
    buttons.push(button('Claim', CLAIM_ACTION_IDS.claim, claimButtonValue({ _id: item.thread_id }), 'primary'));
    buttons.push({ type: 'button', action_id: ACTION_IDS.openInbox, text: plain('View in inbox'), url: inboxUrl });
    return buttons;
  }
  if (audience === 'recipient' && item.status === 'pending') {
    buttons.push(button('Accept', ACTION_IDS.accept, value, 'primary'), button('Decline', ACTION_IDS.decline, value));
  }
  if (audience === 'recipient' && item.status === 'accepted')
    buttons.push(button('Complete', ACTION_IDS.complete, value, 'primary'));
  if (open) buttons.push(button('Reply', ACTION_IDS.reply, value));
  buttons.push({ type: 'button', action_id: ACTION_IDS.openInbox, text: plain('View in inbox'), url: inboxUrl });
  return buttons;
}

/** One thread: what it is, who, its state, and its buttons. */
export function threadItemBlocks(item: ListItem, audience: Audience, inboxUrl: string): Block[] {
  const other = audience === 'recipient' ? `from ${party(item.sender)}` : `to ${party(item.recipient)}`;
  const unread = item.unread_messages > 0 ? ` · :speech_balloon: ${item.unread_messages} new` : '';
  return [
    section(
      `${escapeMrkdwn(item.summary_preview)}\n${INTENT[item.intent]} ${other} · ${STATUS[item.status]}${unread} · ` +
        slackDate(new Date(item.created_at)),
    ),
    { type: 'actions', block_id: `thread_${item.thread_id}`, elements: threadButtons(item, audience, inboxUrl) },
  ];
}

export interface HomeInput {
  handle: string;
  waiting: ThreadPage;
  sent: ThreadPage;
  page: HomePage;
  inboxUrl: (threadId: string) => string;
  /** The daily digest's setting for this person, with its on/off button (absent: the digest is off on this relay). */
  digest?: { off: boolean; at: string };
}

/** The digest's own buttons (the digest message carries the "off" one too: views/daily-digest.ts). */
export const DIGEST_ACTION_IDS = { off: 'handoff_digest_off', on: 'handoff_digest_on' } as const;
export const DIGEST_BLOCK_IDS = { settings: 'digest_settings' } as const;

function pageButton(text: string, page: HomePage, blockId: string): Block {
  return { type: 'actions', block_id: blockId, elements: [button(text, HOME_ACTION_IDS.page, JSON.stringify(page))] };
}

/** The Home tab of a linked teammate: what waits for them and what they sent, newest first, paged by cursor. */
export function homeView(input: HomeInput): HomeView {
  const { waiting, sent, page } = input;
  const blocks: Block[] = [
    header('Handoffs'),
    context(
      `You are \`${escapeMrkdwn(input.handle)}\` on handoff-relay. \`/handoff\` starts a new handoff; \`/handoff inbox\` lists what waits for you.`,
    ),
    header(page.w ? 'Waiting for you (older)' : 'Waiting for you'),
  ];
  if (waiting.items.length === 0)
    blocks.push(section(page.w ? 'Nothing older is waiting.' : 'Nothing is waiting for you.'));
  for (const item of waiting.items.slice(0, HOME_PAGE_SIZE))
    blocks.push(...threadItemBlocks(item, 'recipient', input.inboxUrl(item.thread_id)));
  if (waiting.next_cursor)
    blocks.push(pageButton('Show older waiting', { ...page, w: waiting.next_cursor }, 'home_more_waiting'));
  blocks.push({ type: 'divider' }, header(page.s ? 'Sent by you (older)' : 'Sent by you'));
  if (sent.items.length === 0)
    blocks.push(section(page.s ? 'Nothing older was sent.' : 'You have not sent a handoff yet.'));
  for (const item of sent.items.slice(0, HOME_PAGE_SIZE))
    blocks.push(...threadItemBlocks(item, 'sender', input.inboxUrl(item.thread_id)));
  if (sent.next_cursor) blocks.push(pageButton('Show older sent', { ...page, s: sent.next_cursor }, 'home_more_sent'));
  if (page.w || page.s) blocks.push(pageButton('Back to newest', {}, 'home_newest'));
  if (input.digest) {
    const { off, at } = input.digest;
    blocks.push(
      { type: 'divider' },
      section(
        off
          ? `:no_bell: Daily digest: *off*.`
          : `:bell: Daily digest: *on*, weekdays at ${escapeMrkdwn(at)} your time.`,
      ),
      {
        type: 'actions',
        block_id: DIGEST_BLOCK_IDS.settings,
        elements: [
          off
            ? button('Turn on the daily digest', DIGEST_ACTION_IDS.on, 'on')
            : button('Turn off the daily digest', DIGEST_ACTION_IDS.off, 'off'),
        ],
      },
    );
  }
  // Last, so the lists keep their place: the same lists, and actions on them, in the browser.
  blocks.push({ type: 'divider' }, openWebInboxBlock());
  return { type: 'home', callback_id: 'handoff_home', blocks } as unknown as HomeView;
}

/** The Home tab of a Slack user with no teammate: how to get one. */
export function unlinkedHomeView(): HomeView {
  return {
    type: 'home',
    callback_id: 'handoff_home',
    blocks: [
      header('Handoffs'),
      section(
        'Your Slack account is not linked to a handoff-relay teammate yet, so nothing can be handed to you here.\n\n' +
          'Run `/handoff link` to create your teammate (you get its API key once, with the MCP configuration for your agent), ' +
          'or `/handoff link your-name` to choose its handle.',
      ),
      context('An admin can also register you with `handoff-relay register --slack-user YOUR_MEMBER_ID`.'),
    ],
  } as unknown as HomeView;
}

/** `/handoff inbox`: the caller's unclaimed (as a candidate), pending and accepted handoffs, ephemeral, with the DM's buttons (Claim for unclaimed). */
export function inboxMessage(input: { handle: string; page: ThreadPage; inboxUrl: (threadId: string) => string }) {
  const { items } = input.page;
  const blocks: Block[] = [header('Your handoff inbox')];
  if (items.length === 0) {
    blocks.push(
      section(`Nothing is waiting for \`${escapeMrkdwn(input.handle)}\`: no unclaimed, pending or accepted handoffs.`),
    );
    return { text: 'Your handoff inbox is empty.', blocks };
  }
  blocks.push(
    context(
      `Unclaimed (you are a candidate), pending and accepted handoffs for \`${escapeMrkdwn(input.handle)}\`, newest first.`,
    ),
  );
  let budget = INBOX_TEXT_BUDGET - textLength(blocks);
  let shown = 0;
  for (const item of items.slice(0, INBOX_PAGE_SIZE)) {
    const itemBlocks = threadItemBlocks(item, 'recipient', input.inboxUrl(item.thread_id));
    const cost = textLength(itemBlocks);
    if (cost > budget) break;
    blocks.push(...itemBlocks);
    budget -= cost;
    shown += 1;
  }
  if (shown < items.length || input.page.next_cursor) {
    blocks.push(context('More are waiting: open the *Home* tab of handoff-relay to page through all of them.'));
  }
  const text = `Your handoff inbox: ${shown}${shown < items.length || input.page.next_cursor ? '+' : ''} unclaimed, pending or accepted handoff(s).`;
  return { text, blocks };
}
