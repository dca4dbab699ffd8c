// `/handoff link [handle]`: binds the caller's Slack account to a new teammate and shows its API key once.
import { z } from 'zod';
import { agentCardInputSchema, LIMITS } from '../../../relay-core/domain/schemas';
import { RelayError } from '../../../relay-core/domain/errors';
import { linkedModal, linkFailedModal, linkingModal } from '../../views/link-modal';
import type { CommandArgs, CommandDeps } from './command-args';
import { slackErrorCode } from '../../delivery/slack-errors';

// The modal opens first (the trigger expires in 3 seconds) and is filled in once the teammate exists. An already
// linked caller is told who they are; no second key is ever made.

const userInfoSchema = z.object({
  user: z.object({
    name: z.string().default(''),
    real_name: z.string().default(''),
    profile: z.object({ display_name: z.string().default(''), real_name: z.string().default('') }).partial().default({}),
  }),
});

function profileNames(data: unknown): { name: string; realName: string; displayName: string } {
  const parsed = userInfoSchema.safeParse(data);
  if (!parsed.success) return { name: '', realName: '', displayName: '' };
  const { user } = parsed.data;
  return { name: user.name.trim(), realName: (user.profile.real_name || user.real_name).trim(), displayName: (user.profile.display_name ?? '').trim() };
}

export async function linkCommand(deps: CommandDeps, { client, command, respond }: CommandArgs, requested?: string): Promise<void> {
  const { teammates, links, team } = deps;
  const say = (text: string) => respond({ response_type: 'ephemeral', text });
  const existing = await teammates.bySlackUser(command.user_id);
  if (existing) {
    return void (await say(`Your Slack account is already linked to teammate \`${existing.handle}\`; no new key was made.`));
  }
  if (!team) {
    return void (await say('Linking from Slack is off on this relay: it needs RELAY_TEAM (the team new teammates join). Ask an admin to set it, or to register you.'));
  }

  // Slack's profile names the teammate (and derives the handle when none was given).
  let profile: ReturnType<typeof profileNames>;
  try {
    profile = profileNames(await client.users.info({ user: command.user_id }));
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === undefined) throw error;
    return void (await say(`Slack did not give handoff-relay your profile (${code}); nothing was created. Try again, or ask an admin to register you.`));
  }
  let handle: string;
  if (requested) {
    const [local, suffix] = requested.replace(/^@/, '').split('@');
    if (suffix !== undefined && suffix !== team) {
      return void (await say(`Teammates linked here join team \`${team}\`, so the handle must end in \`@${team}\` (got \`${requested}\`). Nothing was created.`));
    }
    handle = `${local}@${team}`;
  } else {
    const base = toHandleLocal(profile.displayName || profile.name || profile.realName);
    if (!base) return void (await say('Your Slack profile gives no usable name; choose a handle: `/handoff link your-name`.'));
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
    return void (await say(`\`${handle}\` cannot be a handle: it ${issue.message}. Try \`/handoff link your-name\`. Nothing was created.`));
  }

  let viewId: string;
  try {
    const opened = await client.views.open({ trigger_id: command.trigger_id, view: linkingModal(handle) });
    viewId = opened.view!.id!;
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === undefined) throw error;
    return void (await say(`Slack did not open the link window (${code}); nothing was created. Run \`/handoff link\` again.`));
  }

  let result: { api_key: string } | { problem: string };
  try {
    result = await teammates.register(card.data);
  } catch (error) {
    if (!(error instanceof RelayError)) throw error;
    result = { problem: await whyNotRegistered(deps, command.user_id, handle, error) };
  }
  const view =
    'api_key' in result
      ? linkedModal({ handle, apiKey: result.api_key, snippets: deps.clientSetup({ relayUrl: links.publicUrl, apiKey: result.api_key, handle }) })
      : linkFailedModal(result.problem);
  deps.log.info({ slack_user: command.user_id, handle, linked: 'api_key' in result }, 'slack link');
  try {
    await client.views.update({ view_id: viewId, view });
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === undefined || !('api_key' in result)) throw error;
    // The key exists only in this process now; it is not sent anywhere else, so the teammate needs a new one.
    await say(`You are linked as \`${handle}\`, but Slack did not show your key (${code}). Ask an admin for a new key (it revokes the lost one).`);
  }
}

async function whyNotRegistered(deps: CommandDeps, slackUser: string, handle: string, error: RelayError): Promise<string> {
  // A concurrent `/handoff link` may have won: then this user is linked, just not by this call.
  const linked = await deps.teammates.bySlackUser(slackUser);
  if (linked) return `Your Slack account is already linked to teammate ${linked.handle}; no new key was made.`;
  // The link exists but its teammate is not readable yet (the winner is still writing it) or is disabled.
  const taken = error.code === 'conflict' ? (error.details as { field?: string } | undefined)?.field : undefined;
  if (taken === 'slack_user_id') return 'Your Slack account is already linked to a handoff-relay teammate; no new key was made.';
  if (taken === 'handle') return `The handle ${handle} is taken. Choose another: /handoff link another-name`;
  return error.message;
}

/** A Slack display name as a handle's local part: lower case, letters, digits, ".", "_" and "-". */
export function toHandleLocal(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 60);
}
