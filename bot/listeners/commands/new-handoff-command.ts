// `/handoff` alone: opens the new-handoff modal with the command's trigger (valid for 3 seconds, used once).
import { slackErrorCode } from '../../delivery/slack-errors';
import { newHandoffModal } from '../../views/new-handoff-modal';
import type { CommandArgs } from './command-args';

export async function openNewHandoffModal(
  { client, command }: CommandArgs,
  say: (text: string) => Promise<unknown>,
): Promise<void> {
  try {
    await client.views.open({ trigger_id: command.trigger_id, view: newHandoffModal() });
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === undefined) throw error;
    await say(`Slack did not open the handoff form (${code}); run \`/handoff\` again.`);
  }
}
