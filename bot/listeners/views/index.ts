// Modal submissions: every callback_id the app's modals carry, tied to its handler.
import type { App } from '@slack/bolt';
import type { SlackAppDeps } from '../../slack-app';
import { registerTransitionViews } from './transition-views';

export function registerViews(app: App, deps: SlackAppDeps): void {
  registerTransitionViews(app, deps);
}
