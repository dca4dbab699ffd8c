// Slash commands: every command the manifest declares, tied to its handler.
import type { App } from '@slack/bolt';
import type { CommandDeps } from './command-args';
import { HANDOFF_COMMAND, handoffCommand } from './handoff-command';

export function registerCommands(app: App, deps: CommandDeps): void {
  app.command(HANDOFF_COMMAND, handoffCommand(deps));
}
