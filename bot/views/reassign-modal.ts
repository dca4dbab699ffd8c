// The Reassign modal: the sender picks another teammate (a Slack user, mapped to their linked teammate).
import { z } from 'zod';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { threadStatusSchema } from '../../relay-core/domain/schemas';
import { REASSIGN_VIEW } from '../blocks/timer-action-ids';
import { escapeWithin, truncate } from '../blocks/mrkdwn';

export const reassignMetadataSchema = z.object({ t: z.uuid(), s: threadStatusSchema });

export function reassignModal(thread: ThreadDoc, recipientName: string) {
  return {
    type: 'modal' as const,
    callback_id: REASSIGN_VIEW.callbackId,
    private_metadata: JSON.stringify({ t: thread._id, s: thread.status }),
    title: { type: 'plain_text' as const, text: 'Reassign handoff' },
    submit: { type: 'plain_text' as const, text: 'Reassign' },
    close: { type: 'plain_text' as const, text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: escapeWithin(
            `${thread.status === 'unclaimed' ? `Nobody (${truncate(recipientName, 60)}) has claimed` : `${truncate(recipientName, 60)} has not accepted`}: "${truncate(thread.summary.replace(/\s+/g, ' '), 200)}". Who should take it over?`,
            2000,
          ).text,
        },
      },
      {
        type: 'input',
        block_id: REASSIGN_VIEW.block,
        label: { type: 'plain_text', text: 'Reassign to' },
        element: {
          type: 'users_select',
          action_id: REASSIGN_VIEW.action,
          placeholder: { type: 'plain_text', text: 'Pick a teammate' },
        },
      },
    ],
  };
}
