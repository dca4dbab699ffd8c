// Decline, Complete and Reply buttons: ack, check the click, then open the modal with the click's trigger_id.
import type { Relay } from '../../../relay-core/service/relay-service';
import { TRANSITION_MODALS, type TransitionModal } from '../../views/transition-modals';
import { checkClick, type ButtonArgs, type ClickRule } from './button-click';

// The trigger expires 3 s after the click, so the modal opens at once; listeners/views/transition-views.ts handles
// the submission.

const RULES: Record<TransitionModal, ClickRule> = {
  decline: { who: 'recipient', verb: 'decline', from: ['pending'] },
  complete: { who: 'recipient', verb: 'complete', from: ['accepted'] },
  reply: { who: 'participant' },
};

export interface ModalButtonDeps {
  reads: Relay['reads'];
  teammates: Relay['teammates'];
}

export function modalButton({ reads, teammates }: ModalButtonDeps, kind: TransitionModal) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const click = await checkClick({ reads, teammates }, args, RULES[kind]);
    if (!click) return;
    const sender = await teammates.get(click.thread.from);
    const view = TRANSITION_MODALS[kind]({
      thread: click.thread,
      shownStatus: click.shownStatus,
      senderName: sender?.name ?? click.thread.from,
    });
    await args.client.views.open({ trigger_id: args.body.trigger_id, view });
  };
}
