// `/handoff link [handle]`: binds the caller's Slack account to a new teammate and shows its API key once.
import { agentCardInputSchema, LIMITS } from '../../../relay-core/domain/schemas';
import { RelayError } from '../../../relay-core/domain/errors';
import type { CommandArgs, CommandDeps } from './command-args';
import {
  newTeammateModal,
  profileHandleLocal,
  slackProfile,
  whyNotRegistered,
  type NewTeammate,
} from './new-teammate-modal';

// An already linked caller is told who they are; no second key is ever made.

export async function linkCommand(deps: CommandDeps, args: CommandArgs, requested?: string): Promise<void> {
  const { teammates, team } = deps;
  const { command, respond } = args;
  const say = (text: string) => respond({ response_type: 'ephemeral', text });
  const existing = await teammates.bySlackUser(command.user_id);
  if (existing) {
    return void (await say(
      `Your Slack account is already linked to teammate \`${existing.handle}\`; no new key was made.`,
    ));
  }
  if (!team) {
    return void (await say(
      'Linking from Slack is off on this relay: it needs RELAY_TEAM (the team new teammates join). Ask an admin to set it, or to register you.',
    ));
  }

  // Slack's profile names the teammate (and derives the handle when none was given).
  const profile = await slackProfile(args);
  if ('slackError' in profile) {
    return void (await say(
      `Slack did not give handoff-relay your profile (${profile.slackError}); nothing was created. Try again, or ask an admin to register you.`,
    ));
  }
  let handle: string;
  if (requested) {
    const [local, suffix] = requested.replace(/^@/, '').split('@');
    if (suffix !== undefined && suffix !== team) {
      return void (await say(
        `Teammates linked here join team \`${team}\`, so the handle must end in \`@${team}\` (got \`${requested}\`). Nothing was created.`,
      ));
    }
    handle = `${local}@${team}`;
  } else {
    const base = profileHandleLocal(profile);
    if (!base)
      return void (await say('Your Slack profile gives no usable name; choose a handle: `/handoff link your-name`.'));
    handle = `${base}@${team}`;
  }
  const card = agentCardInputSchema.safeParse({
    handle,
    name: (profile.realName || profile.displayName || handle.split('@')[0]!).slice(0, LIMITS.name),
    role: 'member',
    slack_user_id: command.user_id,
  });
  if (!card.success) {
    const issue = card.error.issues[0]!;
    return void (await say(
      `\`${handle}\` cannot be a handle: it ${issue.message}. Try \`/handoff link your-name\`. Nothing was created.`,
    ));
  }

  await newTeammateModal(deps, args, {
    handle,
    via: 'link',
    create: async (): Promise<NewTeammate> => {
      try {
        const { api_key } = await teammates.register(card.data);
        return { handle, api_key };
      } catch (error) {
        if (!(error instanceof RelayError)) throw error;
        return { problem: await whyNotRegistered(deps, command.user_id, handle, error, '/handoff link another-name') };
      }
    },
  });
}
