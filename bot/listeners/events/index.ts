// Events: every event the manifest subscribes to, tied to its handler.
import type { App } from '@slack/bolt';
import { appHomeOpened, type HomeDeps } from './app-home';
import { appUninstalled, tokensRevoked, type UninstallDeps } from './app-uninstalled';
import { linkShared, type LinkSharedDeps } from './link-shared';

export function registerEvents(app: App, deps: HomeDeps & LinkSharedDeps & UninstallDeps): void {
  app.event('app_home_opened', appHomeOpened(deps));
  app.event('link_shared', linkShared(deps));
  app.event('app_uninstalled', appUninstalled(deps));
  app.event('tokens_revoked', tokensRevoked(deps));
}
