// The Reassign modal's submission: the picked Slack user must be a linked teammate; then one versioned write changes `to`.
import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from '@slack/bolt';
import { RelayError } from '../../../relay-core/domain/errors';
import type { Relay } from '../../../relay-core/service/relay-service';
import { REASSIGN_VIEW } from '../../blocks/timer-action-ids';
import { reassignMetadataSchema } from '../../views/reassign-modal';
import { safeJson } from '../safe-json';

type SubmitArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

export interface ReassignViewDeps {
  reads: Relay['reads'];
  reassignments: Relay['reassignments'];
  teammates: Relay['teammates'];
}

export function reassignSubmitted({ reads, reassignments, teammates }: ReassignViewDeps) {
  return async ({ ack, body, view }: SubmitArgs): Promise<void> => {
    const refuse = (message: string) => ack({ response_action: 'errors', errors: { [REASSIGN_VIEW.block]: message } });
    const meta = reassignMetadataSchema.safeParse(safeJson(view.private_metadata));
    if (!meta.success)
      return refuse(
        'This form is not one handoff-relay recognises; close it and use the Reassign button again. Nothing was changed.',
      );
    const picked = view.state.values[REASSIGN_VIEW.block]?.[REASSIGN_VIEW.action]?.selected_user;
    if (typeof picked !== 'string' || !picked) return refuse('Please pick a teammate.');
    const [actor, target] = await Promise.all([teammates.bySlackUser(body.user.id), teammates.bySlackUser(picked)]);
    if (!actor) return refuse('Your Slack account is not linked to a handoff-relay teammate. Nothing was changed.');
    if (!target)
      return refuse(
        'That person is not linked to a handoff-relay teammate (they can run /handoff link). Nothing was changed.',
      );
    const thread = await reads.threadById(meta.data.t);
    if (thread && thread.status !== meta.data.s)
      return refuse(`This handoff is now ${thread.status}; it can no longer be reassigned. Nothing was changed.`);
    try {
      await reassignments.reassign(actor, meta.data.t, target.handle, 'slack');
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      return refuse(`${error.message}. Nothing was changed.`);
    }
    await ack();
  };
}
