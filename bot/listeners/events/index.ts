// Events: every event the manifest subscribes to, tied to its handler, plus the Home tab's own paging button.
import type { App } from '@slack/bolt';
import { HOME_ACTION_IDS } from '../../views/home';
import { appHomeOpened, homePageButton, type HomeDeps } from './app-home';

/** Every bot event subscribed here (the manifest's settings.event_subscriptions.bot_events must list each). */
export const EVENTS = ['app_home_opened'] as const;
/** action_ids of the buttons only the Home tab carries (its thread buttons reuse the DM's ACTION_IDS). */
export const HOME_ACTIONS = [HOME_ACTION_IDS.page] as const;

export function registerEvents(app: App, deps: HomeDeps): void {
  app.event('app_home_opened', appHomeOpened(deps));
  app.action(HOME_ACTION_IDS.page, homePageButton(deps));
}
