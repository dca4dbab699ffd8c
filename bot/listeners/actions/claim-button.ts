// Claim (on an unclaimed handoff's card, in a channel or a candidate's DM): ack, claim through the relay (first claim
// wins), and tell the clicker what happened; every copy of the card is redrawn by the `slack` job thread.claimed starts.
import { z } from 'zod';
import { RelayError } from '../../../relay-core/domain/errors';
import type { Relay } from '../../../relay-core/service/relay-service';
import { slackDate } from '../../blocks/mrkdwn';
import { explain, type ButtonArgs } from './button-click';
import { safeJson } from '../safe-json';

const claimValueSchema = z.object({ t: z.uuid(), s: z.literal('unclaimed') });

export interface ClaimButtonDeps {
  claims: Relay['claims'];
  reads: Relay['reads'];
  teammates: Relay['teammates'];
}

export function claimButton({ claims, reads, teammates }: ClaimButtonDeps) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const value = claimValueSchema.safeParse(safeJson(args.action.value));
    if (!value.success) return explain(args, 'This button is not one handoff-relay recognises; nothing was changed.');
    const threadId = value.data.t;
    const [thread, actor] = await Promise.all([reads.threadById(threadId), teammates.bySlackUser(args.body.user.id)]);
    if (!thread) return explain(args, 'This handoff no longer exists; nothing was changed.');
    if (!actor) {
      return explain(
        args,
        'Your Slack account is not linked to a handoff-relay teammate, so you cannot claim handoffs. Run `/handoff link` first. Nothing was changed.',
      );
    }
    if (thread.claimed_by === actor.handle) {
      return explain(
        args,
        `You already claimed this handoff (${thread.claimed_at ? slackDate(thread.claimed_at) : 'earlier'}); its DM with Accept and Decline is yours. Nothing was changed.`,
      );
    }
    try {
      await claims.claim(actor, threadId, 'slack');
    } catch (error) {
      if (error instanceof RelayError) {
        // Who claimed it first, at a time Slack shows in the reader's own zone.
        const latest = error.code === 'invalid_transition' ? await reads.threadById(threadId) : null;
        if (latest?.claimed_by && latest.claimed_at)
          return explain(
            args,
            `Already claimed by ${latest.claimed_by} ${slackDate(latest.claimed_at)}. Nothing was changed.`,
          );
        return explain(args, `${error.message.replace(/\.$/, '')}. Nothing was changed.`);
      }
      throw error;
    }
    await explain(
      args,
      ':raised_hand: You claimed this handoff: it is yours now, and its DM with Accept and Decline is on its way.',
    );
  };
}
