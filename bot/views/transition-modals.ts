// The modals behind the DM's Decline, Complete and Reply buttons: pure builders, their ids, their private_metadata.
import type { types } from '@slack/bolt';
import { z } from 'zod';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { LIMITS, threadStatusSchema, type ThreadStatus } from '../../relay-core/domain/schemas';

// The private_metadata (thread id + the status the button showed) comes back on submission.

export const CALLBACK_IDS = {
  decline: 'handoff_decline_modal',
  complete: 'handoff_complete_modal',
  reply: 'handoff_reply_modal',
} as const;
export type TransitionModal = keyof typeof CALLBACK_IDS;

/** Input blocks (block_id) and their elements (action_id): where values are read and field errors shown. */
export const INPUTS = {
  reason: { block_id: 'decline_reason', action_id: 'reason' },
  summary: { block_id: 'complete_summary', action_id: 'summary' },
  links: { block_id: 'complete_links', action_id: 'links' },
  body: { block_id: 'reply_body', action_id: 'body' },
} as const;

/** Slack caps a plain_text_input at 3000 characters; the relay's own limits are the other bound. */
const SLACK_INPUT_MAX = 3000;
export const INPUT_MAX = {
  reason: Math.min(LIMITS.reason, SLACK_INPUT_MAX),
  summary: Math.min(LIMITS.summary, SLACK_INPUT_MAX),
  links: SLACK_INPUT_MAX,
  body: Math.min(LIMITS.summary, SLACK_INPUT_MAX),
} as const;

export const modalMetadataSchema = z.object({ t: z.uuid(), s: threadStatusSchema }).strict();
export type ModalMetadata = z.infer<typeof modalMetadataSchema>;

interface ModalInput {
  thread: ThreadDoc;
  /** The status the clicked button showed; the submission is refused if the thread moved on. */
  shownStatus: ThreadStatus;
  senderName: string;
}

type Block = types.KnownBlock;
type ModalView = types.ModalView;

const plain = (text: string): types.PlainTextElement => ({ type: 'plain_text', text, emoji: true });

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** What the modal is about: the sender and the handoff summary, as plain text (nothing in it is interpreted). */
function aboutBlock({ thread, senderName }: ModalInput): Block {
  return {
    type: 'context',
    elements: [plain(clip(`Handoff from ${senderName}: ${thread.summary}`, 1900))],
  };
}

function textInput(
  input: (typeof INPUTS)[keyof typeof INPUTS],
  label: string,
  opts: { max: number; hint?: string; optional?: boolean; placeholder?: string },
): Block {
  return {
    type: 'input',
    block_id: input.block_id,
    label: plain(label),
    ...(opts.hint ? { hint: plain(opts.hint) } : {}),
    ...(opts.optional ? { optional: true } : {}),
    element: {
      type: 'plain_text_input',
      action_id: input.action_id,
      multiline: true,
      max_length: opts.max,
      ...(opts.placeholder ? { placeholder: plain(opts.placeholder) } : {}),
    },
  };
}

function modal(kind: TransitionModal, input: ModalInput, title: string, submit: string, blocks: Block[]): ModalView {
  const metadata: ModalMetadata = { t: input.thread._id, s: input.shownStatus };
  return {
    type: 'modal',
    callback_id: CALLBACK_IDS[kind],
    private_metadata: JSON.stringify(metadata),
    title: plain(title),
    submit: plain(submit),
    close: plain('Cancel'),
    blocks: [aboutBlock(input), ...blocks],
  };
}

export function declineModal(input: ModalInput): ModalView {
  return modal('decline', input, 'Decline handoff', 'Decline', [
    textInput(INPUTS.reason, 'Why are you declining?', { max: INPUT_MAX.reason, hint: 'The sender sees this reason.' }),
  ]);
}

export function completeModal(input: ModalInput): ModalView {
  return modal('complete', input, 'Complete handoff', 'Complete', [
    textInput(INPUTS.summary, 'What was done?', {
      max: INPUT_MAX.summary,
      hint: 'The result summary the sender receives.',
    }),
    textInput(INPUTS.links, 'Links', {
      max: INPUT_MAX.links,
      optional: true,
      hint: `One http(s) URL per line (pull request, commit, docs); at most ${LIMITS.artifacts}.`,
      placeholder: 'https://github.com/acme/app/pull/42',
    }),
  ]);
}

export function replyModal(input: ModalInput): ModalView {
  return modal('reply', input, 'Reply to handoff', 'Send', [
    textInput(INPUTS.body, 'Your message', {
      max: INPUT_MAX.body,
      hint: 'Added to the handoff thread; the other side sees it.',
    }),
  ]);
}

export const TRANSITION_MODALS = { decline: declineModal, complete: completeModal, reply: replyModal } as const;
