// Slash commands: every command the manifest declares, tied to its handler, and the modals those commands open.
import type { App } from '@slack/bolt';
import { LINK_CALLBACK_ID } from '../../views/link-modal';
import { NEW_HANDOFF_CALLBACK_ID } from '../../views/new-handoff-modal';
import { newHandoffSubmitted } from '../views/new-handoff-view';
import { HANDOFF_COMMAND, handoffCommand, type CommandDeps } from './handoff-command';

/** Every slash command registered here (the manifest must declare each). */
export const COMMANDS = [HANDOFF_COMMAND] as const;
/** callback_ids of the modals `/handoff` opens (the link modal has no submit button, so no listener). */
export const VIEW_IDS = [NEW_HANDOFF_CALLBACK_ID, LINK_CALLBACK_ID] as const;

export function registerCommands(app: App, deps: CommandDeps): void {
  app.command(HANDOFF_COMMAND, handoffCommand(deps));
  app.view(NEW_HANDOFF_CALLBACK_ID, newHandoffSubmitted(deps));
}
