// Modal submissions: every callback_id the app's modals carry, tied to its handler (the link modal has no submit).
import type { App } from '@slack/bolt';
import { NEW_HANDOFF_CALLBACK_ID } from '../../views/new-handoff-modal';
import { CALLBACK_IDS } from '../../views/transition-modals';
import { APPROVAL_REJECT_CALLBACK_ID } from '../../views/approval-reject-modal';
import { approvalRejectSubmitted, type ApprovalRejectViewDeps } from './approval-reject-view';
import { newHandoffSubmitted, type NewHandoffViewDeps } from './new-handoff-view';
import { transitionSubmission, type TransitionViewsDeps } from './transition-views';
import { REASSIGN_VIEW } from '../../blocks/timer-action-ids';
import { reassignSubmitted, type ReassignViewDeps } from './reassign-view';

export function registerViews(
  app: App,
  deps: NewHandoffViewDeps & TransitionViewsDeps & ReassignViewDeps & ApprovalRejectViewDeps,
): void {
  app.view(NEW_HANDOFF_CALLBACK_ID, newHandoffSubmitted(deps));
  app.view(CALLBACK_IDS.decline, transitionSubmission(deps, 'decline'));
  app.view(CALLBACK_IDS.complete, transitionSubmission(deps, 'complete'));
  app.view(CALLBACK_IDS.reply, transitionSubmission(deps, 'reply'));
  app.view(REASSIGN_VIEW.callbackId, reassignSubmitted(deps));
  app.view(APPROVAL_REJECT_CALLBACK_ID, approvalRejectSubmitted(deps));
}
