// /handoff: for now it explains how to hand work over; the modal and subcommands come with the full Slack app.
import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';

export const HANDOFF_COMMAND = '/handoff';

export const HANDOFF_HELP =
  '*handoff-relay*\n' +
  '• Your agent sends handoffs with the MCP tool `handoff_to_teammate`; they arrive here as a DM with *Accept* and *Complete* buttons.\n' +
  '• Starting a handoff from Slack with `/handoff` is not available yet.';

export async function handoffCommand({ ack }: SlackCommandMiddlewareArgs & AllMiddlewareArgs): Promise<void> {
  await ack({ response_type: 'ephemeral', text: HANDOFF_HELP });
}
