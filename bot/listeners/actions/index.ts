// Button listeners: every action_id the DM carries, tied to its handler.
import type { App } from '@slack/bolt';
import type { RelayService } from '../../../relay-core/relay-service';
import { ACTION_IDS } from '../../blocks/handoff-dm';
import { transitionButton } from './transition-button';

export function registerActions(app: App, relay: RelayService): void {
  app.action(ACTION_IDS.accept, transitionButton(relay, 'accept'));
  app.action(ACTION_IDS.complete, transitionButton(relay, 'complete'));
  // The inbox button is a link; Slack still sends an action, which only needs an ack.
  app.action(ACTION_IDS.openInbox, async ({ ack }) => {
    await ack();
  });
}
