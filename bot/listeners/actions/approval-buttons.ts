// An approver's Approve and Reject buttons: ack, check the click, then decide (Approve) or ask why (Reject's modal).
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  APPROVAL_ID_PATTERN,
  approverEntries,
  type ApprovalRecord,
  type Voter,
} from '../../../relay-core/domain/approval';
import type { ThreadDoc } from '../../../relay-core/domain/documents';
import { RelayError } from '../../../relay-core/domain/errors';
import type { Relay } from '../../../relay-core/service/relay-service';
import { stillApplicable } from '../../blocks/approval-dm';
import { approvalDmKey } from '../../delivery/slack-posts';
import { approvalRejectModal } from '../../views/approval-reject-modal';
import { safeJson } from '../safe-json';
import { explain, type ButtonArgs } from './button-click';

const approvalValueSchema = z
  .object({ a: z.string().regex(APPROVAL_ID_PATTERN), b: z.string().regex(/^[0-9a-f]{16}$/) })
  .strict();

export interface ApprovalButtonDeps {
  approvalDecisions: Relay['approvalDecisions'];
  approvalRecords: Relay['approvalRecords'];
  teammates: Relay['teammates'];
  log: Logger;
}

/** The Slack user as a voter: their own id, and the teammate it is linked to when there is one. */
export async function slackVoter(teammates: Relay['teammates'], slackUser: string): Promise<Voter> {
  const linked = await teammates.bySlackUser(slackUser);
  return { slack_user_id: slackUser, handle: linked?.handle ?? null, label: linked?.handle ?? slackUser };
}

/**
 * Every check a click on an approval's button runs: a value this relay made, an approval that exists and still
 * binds what the button showed, the latest copy of the DM, an approver, an approval still open. Null after the
 * refusal was explained; nothing is changed by a refused click.
 */
export async function checkApprovalClick(
  { approvalRecords, teammates }: Pick<Relay, 'approvalRecords' | 'teammates'>,
  slackUser: string,
  value: unknown,
  where: { channel?: string; messageTs?: string; inMessage: boolean },
  say: (text: string) => Promise<void>,
): Promise<{ thread: ThreadDoc; record: ApprovalRecord; voter: Voter } | null> {
  const parsed = approvalValueSchema.safeParse(value);
  if (!parsed.success) {
    await say('This button is not one handoff-relay recognises; nothing was changed.');
    return null;
  }
  const found = await approvalRecords.get(parsed.data.a).catch((error: unknown) => {
    if (error instanceof RelayError && error.code === 'not_found') return null;
    throw error;
  });
  if (!found || !found.record.binding.startsWith(parsed.data.b)) {
    await say('This button does not match any approval handoff-relay asked for; nothing was changed.');
    return null;
  }
  const { thread, record } = found;
  const voter = await slackVoter(teammates, slackUser);
  if (approverEntries(record, voter).length === 0) {
    await say(
      `Only the approvers of this request (${[...new Set(record.approvers.map((a) => a.label))].join(', ')}) can decide it. Nothing was changed.`,
    );
    return null;
  }
  const dm = thread.slack_approvals?.[approvalDmKey(record.id, slackUser)];
  if (where.inMessage && dm && where.channel === dm.channel && where.messageTs !== dm.ts) {
    await say('This message is out of date; use the latest message for this approval. Nothing was changed.');
    return null;
  }
  if (record.status !== 'pending') {
    await say(
      `This request is already ${record.status.replace('_', ' ')}${record.decided_by ? ` (by ${record.decided_by})` : ''}. Nothing was changed.`,
    );
    return null;
  }
  if (record.approvals.some((v) => approverEntries(record, voter).some((a) => a.label === v.by))) {
    await say(
      `You already approved this request; it waits for ${record.quorum - new Set(record.approvals.map((v) => v.by)).size} more approval(s). Nothing was changed.`,
    );
    return null;
  }
  if (!stillApplicable(thread, record)) {
    await say(`There is nothing to approve any more: the handoff is ${thread.status} now. Nothing was changed.`);
    return null;
  }
  return { thread, record, voter };
}

function clickPlace(args: ButtonArgs) {
  const container = args.body.container as
    { type?: string; channel_id?: string; message_ts?: string; is_ephemeral?: boolean } | undefined;
  return {
    channel: args.body.channel?.id ?? container?.channel_id,
    messageTs: args.body.message?.ts ?? container?.message_ts,
    inMessage: container?.type === 'message' && !container.is_ephemeral,
  };
}

export function approveButton(deps: ApprovalButtonDeps) {
  const { approvalDecisions, log } = deps;
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const say = (text: string) => explain(args, text);
    const click = await checkApprovalClick(deps, args.body.user.id, safeJson(args.action.value), clickPlace(args), say);
    if (!click) return;
    try {
      const answer = await approvalDecisions.decide(click.record.id, click.voter, 'approve', 'slack');
      await say(answer.message);
    } catch (error) {
      log.warn({ approval_id: click.record.id, err: (error as Error).message }, 'slack approve failed');
      await say(
        error instanceof RelayError
          ? `${error.message}. Nothing was changed.`
          : 'Something went wrong on handoff-relay’s side; press Approve again in a moment. Nothing was changed.',
      );
    }
  };
}

export function rejectButton(deps: ApprovalButtonDeps) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkApprovalClick(
      deps,
      args.body.user.id,
      safeJson(args.action.value),
      clickPlace(args),
      (text) => explain(args, text),
    );
    if (!click) return;
    const { thread, record } = click;
    const about =
      record.action === 'handoff.create'
        ? `Handoff from ${thread.from} to ${thread.to}: ${thread.summary}`
        : `${record.action} by ${record.actor} on the handoff "${thread.summary}"`;
    await args.client.views.open({ trigger_id: args.body.trigger_id, view: approvalRejectModal(record, about) });
  };
}
