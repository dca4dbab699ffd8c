// What a pasted inbox link shows in Slack: the unfurl everyone in the conversation sees (that it is a handoff, nothing
// more), and the card only a participant sees (status, summary, participants), as an ephemeral message.
import type { AgentDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { context, escapeMrkdwn, section, slackDate, truncate, type SlackBlock, type SlackMessage } from './block-kit';
import { ACTION_IDS, personMrkdwn } from './handoff-dm';

// Slack shows an unfurl to every member of the conversation, and has no per-viewer unfurl: so the unfurl is the same
// for every inbox URL, whatever thread or signature it carries (it does not even say whether the thread exists).

const STATUS: Record<ThreadDoc['status'], string> = {
  pending: ':hourglass_flowing_sand: pending',
  accepted: ':white_check_mark: accepted',
  completed: ':tada: completed',
  declined: ':no_entry_sign: declined',
  cancelled: ':wastebasket: cancelled',
  unclaimed: ':raised_hand: unclaimed',
  expired: ':hourglass: expired',
  awaiting_approval: ':raised_hand: awaiting approval',
  rejected: ':no_entry: rejected',
};

/** The unfurl of any inbox link: that it is a handoff, and where its participants read it. */
export function publicUnfurl(): { blocks: SlackBlock[] } {
  return {
    blocks: [
      section(':package: *A handoff on handoff-relay*'),
      context(
        'Only its sender and recipient can read it: from their handoff DM, the app’s Home tab or `/handoff inbox`.',
      ),
    ],
  };
}

export interface ParticipantCardInput {
  thread: ThreadDoc;
  sender: AgentDoc | null;
  recipient: AgentDoc | null;
  /** The inbox link signed for the participant who gets the card. */
  inboxUrl: string;
  /** The pasted link was signed for someone: it opens the thread as them for whoever has it. */
  signedFor: string | null;
}

/** The compact card a participant sees about a handoff whose link was pasted where they are. */
export function participantCard(input: ParticipantCardInput): SlackMessage {
  const { thread } = input;
  const blocks: SlackBlock[] = [
    section(
      `:package: *${escapeMrkdwn(truncate(thread.summary.replace(/\s+/g, ' '), 280))}*\n` +
        `${personMrkdwn(input.sender, thread.from)} → ${personMrkdwn(input.recipient, thread.to)} · ${STATUS[thread.status]} · ` +
        slackDate(thread.created_at),
    ),
    {
      type: 'actions',
      block_id: `unfurl_${thread._id}`,
      elements: [
        {
          type: 'button',
          action_id: ACTION_IDS.openInbox,
          text: { type: 'plain_text', text: 'View in inbox' },
          url: input.inboxUrl,
        },
      ],
    },
  ];
  const notes = ['Only you see this: the link shows others only that it is a handoff.'];
  if (input.signedFor) {
    notes.push(
      `The pasted link is signed for \`${escapeMrkdwn(input.signedFor)}\`: anyone who has it can read the thread as them. Share the link without \`?as=…&sig=…\`.`,
    );
  }
  blocks.push(context(notes.join(' ')));
  return { text: `Handoff ${thread.from} → ${thread.to} (${thread.status})`, blocks };
}
