// Button listeners: every action_id of the DM, the Home tab (which reuses the DM's) and its paging, the claim card, the digest's opt-out and Open web inbox, tied to its handler.
import type { App } from '@slack/bolt';
import { CLAIM_ACTION_IDS } from '../../blocks/claim-card';
import { ACTION_IDS } from '../../blocks/handoff-dm';
import { HOME_ACTION_IDS } from '../../views/home';
import { DIGEST_ACTION_IDS } from '../../views/daily-digest';
import { digestButton, type DigestButtonDeps } from './digest-button';
import type { HomeDeps } from '../events/app-home';
import { APPROVAL_ACTION_IDS } from '../../blocks/approval-dm';
import { acceptButton, type AcceptButtonDeps } from './accept-button';
import { approveButton, rejectButton, type ApprovalButtonDeps } from './approval-buttons';
import { claimButton, type ClaimButtonDeps } from './claim-button';
import { handToAgentButton, stopAgentButton, type RunButtonDeps } from './run-buttons';
import { homePageButton } from './home-page-button';
import { modalButton, type ModalButtonDeps } from './modal-button';
import { TIMER_ACTION_IDS } from '../../blocks/timer-action-ids';
import {
  escalationNudgeButton,
  escalationReassignButton,
  reassignButton,
  resendButton,
  snoozeButton,
  type NudgeDeps,
  type TimerButtonDeps,
} from './timer-buttons';
import { WEB_INBOX_ACTION_IDS } from '../../blocks/web-inbox';
import { webInboxButton, type WebInboxButtonDeps } from './web-inbox-button';

export function registerActions(
  app: App,
  deps: AcceptButtonDeps &
    ModalButtonDeps &
    HomeDeps &
    DigestButtonDeps &
    TimerButtonDeps &
    NudgeDeps &
    ApprovalButtonDeps &
    ClaimButtonDeps &
    RunButtonDeps &
    WebInboxButtonDeps,
): void {
  app.action(ACTION_IDS.accept, acceptButton(deps));
  app.action(ACTION_IDS.decline, modalButton(deps, 'decline'));
  app.action(ACTION_IDS.complete, modalButton(deps, 'complete'));
  app.action(ACTION_IDS.reply, modalButton(deps, 'reply'));
  // The recipient's own agent (docs/agent-runner.md).
  app.action(ACTION_IDS.handToAgent, handToAgentButton(deps));
  app.action(ACTION_IDS.stopAgent, stopAgentButton(deps));
  // The inbox button is a link; Slack still sends an action, which only needs an ack.
  app.action(ACTION_IDS.openInbox, async ({ ack }) => {
    await ack();
  });
  // Open web inbox (DM and Home): a fresh one-time sign-in link in a modal; its link button only needs an ack.
  app.action(WEB_INBOX_ACTION_IDS.open, webInboxButton(deps));
  app.action(WEB_INBOX_ACTION_IDS.signIn, async ({ ack }) => {
    await ack();
  });
  app.action(HOME_ACTION_IDS.page, homePageButton(deps));
  app.action(APPROVAL_ACTION_IDS.approve, approveButton(deps));
  app.action(APPROVAL_ACTION_IDS.reject, rejectButton(deps));
  app.action(CLAIM_ACTION_IDS.claim, claimButton(deps));
  app.action(DIGEST_ACTION_IDS.off, digestButton(deps, true));
  app.action(DIGEST_ACTION_IDS.on, digestButton(deps, false));
  // The timer notices (bot/blocks/timer-notices.ts).
  app.action(TIMER_ACTION_IDS.snooze1h, snoozeButton(deps, TIMER_ACTION_IDS.snooze1h));
  app.action(TIMER_ACTION_IDS.snoozeTomorrow, snoozeButton(deps, TIMER_ACTION_IDS.snoozeTomorrow));
  app.action(TIMER_ACTION_IDS.snoozeWeek, snoozeButton(deps, TIMER_ACTION_IDS.snoozeWeek));
  app.action(TIMER_ACTION_IDS.reassign, reassignButton(deps));
  app.action(TIMER_ACTION_IDS.resend, resendButton(deps));
  // A lead's escalation DM: Nudge, Reassign, and Open (a link, acked only).
  app.action(TIMER_ACTION_IDS.escalationNudge, escalationNudgeButton(deps));
  app.action(TIMER_ACTION_IDS.escalationReassign, escalationReassignButton(deps));
  app.action(TIMER_ACTION_IDS.escalationOpen, async ({ ack }) => {
    await ack();
  });
}
