// Button listeners: every action_id the DM (and the Home tab, which reuses them) carries, tied to its handler.
import type { App } from '@slack/bolt';
import type { SlackAppDeps } from '../../slack-app';
import { ACTION_IDS } from '../../blocks/handoff-dm';
import { acceptButton } from './accept-button';
import { modalButton } from './modal-button';

export function registerActions(app: App, deps: SlackAppDeps): void {
  const { relay } = deps;
  app.action(ACTION_IDS.accept, acceptButton(deps));
  app.action(ACTION_IDS.decline, modalButton(relay, 'decline'));
  app.action(ACTION_IDS.complete, modalButton(relay, 'complete'));
  app.action(ACTION_IDS.reply, modalButton(relay, 'reply'));
  // The inbox button is a link; Slack still sends an action, which only needs an ack.
  app.action(ACTION_IDS.openInbox, async ({ ack }) => {
    await ack();
  });
}
