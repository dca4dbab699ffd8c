// Shortcuts: every callback_id the manifest declares under `features.shortcuts`, tied to its handler.
import type { App } from '@slack/bolt';
import { MESSAGE_SHORTCUT_CALLBACK_ID } from '../../views/new-handoff-modal';
import { messageShortcut, type MessageShortcutDeps } from './message-shortcut';

export function registerShortcuts(app: App, deps: MessageShortcutDeps): void {
  app.shortcut({ callback_id: MESSAGE_SHORTCUT_CALLBACK_ID, type: 'message_action' }, messageShortcut(deps));
}
