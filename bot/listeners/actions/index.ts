// Button listeners: every action_id the DM (and the Home tab, which reuses them) carries, and the Home tab's paging
// button, tied to its handler.
import type { App } from '@slack/bolt';
import type { SlackAppDeps } from '../../slack-app';
import { ACTION_IDS } from '../../blocks/handoff-dm';
import { HOME_ACTION_IDS } from '../../views/home';
import { acceptButton } from './accept-button';
import { homePageButton } from './home-page-button';
import { modalButton } from './modal-button';

export function registerActions(app: App, deps: SlackAppDeps): void {
  app.action(ACTION_IDS.accept, acceptButton(deps));
  app.action(ACTION_IDS.decline, modalButton(deps, 'decline'));
  app.action(ACTION_IDS.complete, modalButton(deps, 'complete'));
  app.action(ACTION_IDS.reply, modalButton(deps, 'reply'));
  // The inbox button is a link; Slack still sends an action, which only needs an ack.
  app.action(ACTION_IDS.openInbox, async ({ ack }) => {
    await ack();
  });
  app.action(HOME_ACTION_IDS.page, homePageButton(deps));
}
