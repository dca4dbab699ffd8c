// The modal behind an approver's Reject button: asks why (the sender or actor is told in these words).
import type { types } from '@slack/bolt';
import { z } from 'zod';
import type { ApprovalRecord } from '../../relay-core/domain/approval';
import { APPROVAL_ID_PATTERN } from '../../relay-core/domain/approval';
import { LIMITS } from '../../relay-core/domain/schemas';

export const APPROVAL_REJECT_CALLBACK_ID = 'approval_reject_modal';
export const APPROVAL_REJECT_INPUT = { block_id: 'approval_reject_reason', action_id: 'reason' } as const;
export const APPROVAL_REASON_MAX = Math.min(LIMITS.reason, 3000);

/** private_metadata: the approval and the start of its binding, as on the button. */
export const approvalMetadataSchema = z
  .object({ a: z.string().regex(APPROVAL_ID_PATTERN), b: z.string().regex(/^[0-9a-f]{16}$/) })
  .strict();
export type ApprovalMetadata = z.infer<typeof approvalMetadataSchema>;

export function approvalRejectModal(
  record: Pick<ApprovalRecord, 'id' | 'binding' | 'action' | 'actor'>,
  about: string,
): types.ModalView {
  const plain = (text: string): types.PlainTextElement => ({ type: 'plain_text', text, emoji: true });
  const metadata: ApprovalMetadata = { a: record.id, b: record.binding.slice(0, 16) };
  return {
    type: 'modal',
    callback_id: APPROVAL_REJECT_CALLBACK_ID,
    private_metadata: JSON.stringify(metadata),
    title: plain('Reject'),
    submit: plain('Reject'),
    close: plain('Cancel'),
    blocks: [
      { type: 'context', elements: [plain(about.length > 1900 ? `${about.slice(0, 1899)}…` : about)] },
      {
        type: 'input',
        block_id: APPROVAL_REJECT_INPUT.block_id,
        label: plain('Why are you rejecting it?'),
        hint: plain(`${record.actor} is told in these words.`),
        element: {
          type: 'plain_text_input',
          action_id: APPROVAL_REJECT_INPUT.action_id,
          multiline: true,
          max_length: APPROVAL_REASON_MAX,
        },
      },
    ],
  };
}
