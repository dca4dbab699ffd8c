// `/handoff channel …`, run in a channel: binds a role, skill or owner target to it (unclaimed handoffs to the target
// are posted there with Claim), unbinds one, or lists the bindings.
import type { WebClient } from '@slack/web-api';
import type { AgentDoc } from '../../../relay-core/domain/documents';
import { RelayError } from '../../../relay-core/domain/errors';
import { ChannelBindings } from '../../../relay-core/service/channel-bindings';
import { slackErrorCode } from '../../delivery/slack-errors';
import type { CommandArgs, CommandDeps } from './command-args';

export const CHANNEL_USAGE =
  '`/handoff channel role:frontend` (also `skill:react`, `owner:apps/web/`), run in a channel, posts unclaimed handoffs to that target there with a *Claim* button. ' +
  '`/handoff channel unbind role:frontend` stops it; `/handoff channel list` shows every binding. Invite the app to the channel first (`/invite @handoff-relay`).';

/** Slack's answers when the app may not post in the channel. */
const CANNOT_POST = new Set(['not_in_channel', 'channel_not_found', 'is_archived', 'restricted_action']);

export async function channelCommand(
  deps: CommandDeps,
  args: CommandArgs,
  caller: AgentDoc,
  parsed: { action: 'bind' | 'unbind' | 'list' | 'usage'; target?: string },
  say: (text: string) => Promise<unknown>,
): Promise<void> {
  const channels = deps.channels;
  const channel = args.command.channel_id;
  if (parsed.action === 'usage') return void (await say(CHANNEL_USAGE));
  if (parsed.action === 'list') {
    const bindings = await channels.list();
    const lines = bindings.map((b) => `• \`${b.target}\` → <#${b.channel}>`);
    return void (await say(
      lines.length
        ? `*Channel bindings*\n${lines.join('\n')}`
        : `No target is bound to a channel yet.\n${CHANNEL_USAGE}`,
    ));
  }
  let target: string;
  try {
    target = ChannelBindings.target(parsed.target!);
  } catch (error) {
    if (error instanceof RelayError) return void (await say(`Nothing was bound: ${error.message}.\n${CHANNEL_USAGE}`));
    throw error;
  }
  if (parsed.action === 'unbind') {
    const removed = await channels.unbind(target);
    return void (await say(
      removed
        ? `\`${target}\` is no longer bound to a channel; unclaimed handoffs to it go to each candidate's DM.`
        : `\`${target}\` was not bound to a channel; nothing changed.`,
    ));
  }
  if (!/^[CG]/.test(channel))
    return void (await say(
      `Run \`/handoff channel ${target}\` in the channel that should receive these handoffs (not in a DM). Nothing was bound.`,
    ));
  // Posting the notice proves the app may post here, before anything is stored.
  try {
    await (args.client as WebClient).chat.postMessage({
      channel,
      text: `:inbox_tray: <@${args.command.user_id}> bound \`${target}\` to this channel: handoffs to ${target} that several teammates could take land here, with a Claim button.`,
    });
  } catch (error) {
    const code = slackErrorCode(error);
    if (code && CANNOT_POST.has(code)) {
      return void (await say(
        `handoff-relay cannot post in this channel (${code}). Invite it first with \`/invite @handoff-relay\`, then run the command again. Nothing was bound.`,
      ));
    }
    throw error;
  }
  const { previous } = await channels.bind(target, channel, caller.handle);
  await say(
    `Bound \`${target}\` to <#${channel}>${previous ? ` (it was bound to <#${previous}>)` : ''}. Unclaimed handoffs to it are posted here with *Claim*.`,
  );
}
