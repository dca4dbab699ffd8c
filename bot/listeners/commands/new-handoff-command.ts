// `/handoff` alone: opens the new-handoff modal with the command's trigger (valid for 3 seconds, used once).
import { newHandoffModal } from '../../views/new-handoff-modal';
import type { CommandArgs } from './handoff-command';

export async function openNewHandoffModal({ client, command }: CommandArgs, say: (text: string) => Promise<unknown>): Promise<void> {
  try {
    await client.views.open({ trigger_id: command.trigger_id, view: newHandoffModal() });
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === undefined) throw error;
    await say(`Slack did not open the handoff form (${code}); run \`/handoff\` again.`);
  }
}

/** The Web API error code of a refused call (`expired_trigger_id`…), or undefined for any other failure. */
export function slackErrorCode(error: unknown): string | undefined {
  const e = error as { code?: string; data?: { error?: string } };
  return e?.code === 'slack_webapi_platform_error' ? e.data?.error : undefined;
}
