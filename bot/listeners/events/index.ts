// Events: every event the manifest subscribes to, tied to its handler.
import type { App } from '@slack/bolt';
import { appHomeOpened, type HomeDeps } from './app-home';

export function registerEvents(app: App, deps: HomeDeps): void {
  app.event('app_home_opened', appHomeOpened(deps));
}
