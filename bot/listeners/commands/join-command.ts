// `/handoff join CODE [handle]`: redeems an invitation from Slack. The caller's Slack account is linked to the new
// teammate in the same registration, and its API key is shown once in the modal `/handoff link` uses.
import type { InviteDoc } from '../../../relay-core/domain/documents';
import { invitedCard } from '../../../relay-core/domain/invite';
import { RelayError } from '../../../relay-core/domain/errors';
import { LIMITS } from '../../../relay-core/domain/schemas';
import type { CommandArgs, CommandDeps } from './command-args';
import {
  newTeammateModal,
  profileHandleLocal,
  slackProfile,
  whyNotRegistered,
  type NewTeammate,
} from './new-teammate-modal';

export const JOIN_USAGE =
  '`/handoff join CODE [handle]` redeems the invitation code (`hri_…`) an admin gave you: your Slack account becomes the new teammate, ' +
  'and you get its API key and MCP configuration once. Without a handle, your Slack name gives one.';

/** The role a teammate joining from Slack gets when the invitation sets none (as `/handoff link` gives). */
const SLACK_ROLE = 'member';

export async function joinCommand(
  deps: CommandDeps,
  args: CommandArgs,
  parsed: { code?: string; handle?: string; extra?: string },
): Promise<void> {
  const { teammates, invites, team } = deps;
  const { command, respond } = args;
  const say = (text: string) => respond({ response_type: 'ephemeral', text });
  if (!parsed.code) return void (await say(JOIN_USAGE));
  if (parsed.extra)
    return void (await say(
      `\`/handoff join\` takes the code and at most a handle; nothing was created.\n${JOIN_USAGE}`,
    ));
  const code = parsed.code;
  const existing = await teammates.bySlackUser(command.user_id);
  if (existing) {
    return void (await say(
      `Your Slack account is already linked to teammate \`${existing.handle}\`; the invitation was not used and no new key was made.`,
    ));
  }
  // A used, revoked, expired or wrong code is told before any window opens, in the words REST answers with.
  let preset: InviteDoc['preset'];
  try {
    preset = (await invites.usable(code)).doc.preset;
  } catch (error) {
    if (error instanceof RelayError) return void (await say(`${error.message}. Nothing was created.`));
    throw error;
  }
  const profile = await slackProfile(args);
  if ('slackError' in profile) {
    return void (await say(
      `Slack did not give handoff-relay your profile (${profile.slackError}); the invitation was not used. Try again.`,
    ));
  }
  const handle = parsed.handle?.replace(/^@/, '') ?? profileHandleLocal(profile);
  if (!handle)
    return void (await say(
      'Your Slack profile gives no usable name; choose a handle: `/handoff join CODE your-name`.',
    ));
  const choice = {
    handle,
    name: (profile.realName || profile.displayName || handle.split('@')[0]!).slice(0, LIMITS.name),
  };
  const from = { via: 'slack' as const, slackUserId: command.user_id, team, role: SLACK_ROLE };
  const card = invitedCard(preset, choice, from);
  if ('field' in card) {
    return void (await say(
      `Nothing was created: the ${card.field} ${card.message}. Try \`/handoff join CODE another-name\`.`,
    ));
  }

  await newTeammateModal(deps, args, {
    handle: card.handle,
    via: 'join',
    create: async (): Promise<NewTeammate> => {
      try {
        const joined = await invites.redeem(code, choice, from);
        return { handle: joined.card.handle, api_key: joined.api_key };
      } catch (error) {
        if (!(error instanceof RelayError)) throw error;
        return {
          problem: await whyNotRegistered(deps, command.user_id, card.handle, error, '/handoff join CODE another-name'),
        };
      }
    },
  });
}
