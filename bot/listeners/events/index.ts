// Events: every event the manifest subscribes to, tied to its handler.
import type { App } from '@slack/bolt';
import { appHomeOpened, type HomeDeps } from './app-home';
import { linkShared, type LinkSharedDeps } from './link-shared';

export function registerEvents(app: App, deps: HomeDeps & LinkSharedDeps): void {
  app.event('app_home_opened', appHomeOpened(deps));
  app.event('link_shared', linkShared(deps));
}
