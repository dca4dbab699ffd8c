// The daily digest DM: what waits on the person (oldest first, with the DM's buttons) and what they wait on (pure).
import type { ListItem } from '../../relay-core/service/wire-views';
import { DIGEST_ACTION_IDS, DIGEST_BLOCK_IDS, threadItemBlocks } from './home';
import {
  actions,
  button,
  context,
  divider,
  escapeMrkdwn,
  header,
  section,
  textLength,
  type SlackBlock,
  type SlackMessage,
} from '../blocks/block-kit';

// Within Slack's message limits: 50 blocks and about 12k characters of text (the same margin as `/handoff inbox`).

// The digest's own buttons (DIGEST_ACTION_IDS) are shared with the Home tab's digest setting; the thread buttons are
// the DM's (ACTION_IDS), whose block ids are `thread_<id>`.
export { DIGEST_ACTION_IDS, DIGEST_BLOCK_IDS };

/** Items shown per list: 2 blocks each, 12 + 8 items stay under 50 blocks with the headers. */
export const DIGEST_WAITING_MAX = 12;
export const DIGEST_SENT_MAX = 8;
const TEXT_BUDGET = 10_500;

export interface DigestInput {
  handle: string;
  /** Pending and accepted handoffs to this person, oldest first (all of them; the builder shows what fits). */
  waiting: ListItem[];
  /** Pending and accepted handoffs this person sent, oldest first. */
  sent: ListItem[];
  inboxUrl: (threadId: string) => string;
}

/** Null when both lists are empty: no digest that day. */
export function dailyDigest(input: DigestInput): SlackMessage | null {
  const { waiting, sent } = input;
  if (waiting.length === 0 && sent.length === 0) return null;
  const blocks: SlackBlock[] = [
    header('Your handoffs today'),
    context(`For \`${escapeMrkdwn(input.handle)}\`: what waits on you and what you wait on, oldest first.`),
  ];
  const footer: SlackBlock[] = [
    divider(),
    actions(
      [button({ actionId: DIGEST_ACTION_IDS.off, text: 'Turn off the daily digest', value: 'off' })],
      DIGEST_BLOCK_IDS.settings,
    ),
  ];
  let budget = TEXT_BUDGET - textLength(blocks) - textLength(footer) - 600;

  const list = (title: string, items: ListItem[], max: number, audience: 'recipient' | 'sender', empty: string) => {
    blocks.push(section(`*${title}* (${items.length})`));
    if (items.length === 0) blocks.push(context(empty));
    let shown = 0;
    for (const item of items.slice(0, max)) {
      const itemBlocks = threadItemBlocks(item, audience, input.inboxUrl(item.thread_id)) as SlackBlock[];
      const cost = textLength(itemBlocks);
      if (cost > budget) break;
      blocks.push(...itemBlocks);
      budget -= cost;
      shown += 1;
    }
    if (shown < items.length)
      blocks.push(context(`…and ${items.length - shown} more: open the *Home* tab of handoff-relay for all of them.`));
  };
  list('Waiting on you', waiting, DIGEST_WAITING_MAX, 'recipient', 'Nothing waits on you.');
  blocks.push(divider());
  list('You are waiting on', sent, DIGEST_SENT_MAX, 'sender', 'You are not waiting on anyone.');
  blocks.push(...footer);
  const text = `Daily handoff digest: ${waiting.length} waiting on you, ${sent.length} you are waiting on.`;
  return { text, blocks };
}

/** The ephemeral answer to the digest's on/off button. */
export function digestSettingMessage(off: boolean): SlackMessage {
  return off
    ? {
        text: 'The daily digest is off for you.',
        blocks: [
          section(
            ':no_bell: The daily handoff digest is *off* for you. The Home tab and `/handoff inbox` still list what waits on you.',
          ),
          actions(
            [button({ actionId: DIGEST_ACTION_IDS.on, text: 'Turn it back on', value: 'on' })],
            DIGEST_BLOCK_IDS.settings,
          ),
        ],
      }
    : {
        text: 'The daily digest is on for you.',
        blocks: [section(':bell: The daily handoff digest is *on* for you again.')],
      };
}
