// Reject modal submission: check the reason and the click again (the approval may have moved on), then reject.
import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from 'pino';
import { RelayError } from '../../../relay-core/domain/errors';
import { isWellFormedText } from '../../../relay-core/domain/schemas';
import type { Relay } from '../../../relay-core/service/relay-service';
import { APPROVAL_REASON_MAX, APPROVAL_REJECT_INPUT, approvalMetadataSchema } from '../../views/approval-reject-modal';
import { checkApprovalClick } from '../actions/approval-buttons';
import { safeJson } from '../safe-json';

type SubmitArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

export interface ApprovalRejectViewDeps {
  approvalDecisions: Relay['approvalDecisions'];
  approvalRecords: Relay['approvalRecords'];
  teammates: Relay['teammates'];
  log: Logger;
}

export function approvalRejectSubmitted(deps: ApprovalRejectViewDeps) {
  const { approvalDecisions, log } = deps;
  return async ({ ack, body, view }: SubmitArgs): Promise<void> => {
    const field = APPROVAL_REJECT_INPUT.block_id;
    const refuse = (text: string) => ack({ response_action: 'errors', errors: { [field]: text } });
    const metadata = approvalMetadataSchema.safeParse(safeJson(view.private_metadata));
    if (!metadata.success)
      return refuse(
        'This form is not one handoff-relay recognises; close it and use the buttons on the latest message. Nothing was changed.',
      );
    const reason = (view.state.values[field]?.[APPROVAL_REJECT_INPUT.action_id]?.value ?? '').trim();
    if (!reason) return refuse('Please write a reason.');
    if (reason.length > APPROVAL_REASON_MAX) return refuse(`Please keep it to ${APPROVAL_REASON_MAX} characters.`);
    if (!isWellFormedText(reason) || reason.includes('\u0000'))
      return refuse('This text has characters that cannot be stored; please retype it.');
    let refusal: string | null = null;
    const click = await checkApprovalClick(deps, body.user.id, metadata.data, { inMessage: false }, async (text) => {
      refusal = text;
    });
    if (!click) return refuse(refusal ?? 'Nothing was changed.');
    try {
      const answer = await approvalDecisions.decide(click.record.id, click.voter, 'reject', 'slack', reason);
      if (!answer.changed) return refuse(answer.message);
      await ack();
    } catch (error) {
      log.warn({ approval_id: click.record.id, err: (error as Error).message }, 'slack reject failed');
      return refuse(
        error instanceof RelayError
          ? `${error.message}. Nothing was changed.`
          : 'Something went wrong on handoff-relay’s side; please try again. Nothing was changed.',
      );
    }
  };
}
