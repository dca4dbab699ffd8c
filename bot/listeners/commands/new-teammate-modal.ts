// What `/handoff link` and `/handoff join` share: the caller's Slack profile, and the modal that opens at once (the
// trigger expires in 3 seconds) and is filled in with the new teammate's key and MCP configuration, or why not.
import { z } from 'zod';
import { RelayError } from '../../../relay-core/domain/errors';
import { slackErrorCode } from '../../delivery/slack-errors';
import { linkedModal, linkFailedModal, linkingModal } from '../../views/link-modal';
import type { CommandArgs, CommandDeps } from './command-args';

const userInfoSchema = z.object({
  user: z.object({
    name: z.string().default(''),
    real_name: z.string().default(''),
    is_admin: z.boolean().default(false),
    is_owner: z.boolean().default(false),
    profile: z
      .object({ display_name: z.string().default(''), real_name: z.string().default('') })
      .partial()
      .default({}),
  }),
});

export interface SlackProfile {
  name: string;
  realName: string;
  displayName: string;
  /** A workspace admin or owner, as users.info says. */
  isAdmin: boolean;
}

/** The caller's profile from users.info, or Slack's error code when Slack refused (any other failure throws). */
export async function slackProfile({ client, command }: CommandArgs): Promise<SlackProfile | { slackError: string }> {
  let data: unknown;
  try {
    data = await client.users.info({ user: command.user_id });
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === undefined) throw error;
    return { slackError: code };
  }
  const parsed = userInfoSchema.safeParse(data);
  if (!parsed.success) return { name: '', realName: '', displayName: '', isAdmin: false };
  const { user } = parsed.data;
  return {
    name: user.name.trim(),
    realName: (user.profile.real_name || user.real_name).trim(),
    displayName: (user.profile.display_name ?? '').trim(),
    isAdmin: user.is_admin || user.is_owner,
  };
}

/** The handle's local part a profile suggests (display name, else user name, else real name); '' when none fits. */
export function profileHandleLocal(profile: SlackProfile): string {
  return toHandleLocal(profile.displayName || profile.name || profile.realName);
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

/** What making the teammate came to: its handle and key, or a sentence saying why there is none. */
export type NewTeammate = { handle: string; api_key: string } | { problem: string };

/**
 * Opens the "creating…" modal with the command's trigger, runs `create`, and shows the key with the MCP
 * configuration (once: the key lives only in this call) or the problem. `via` is the subcommand, for the log and for
 * the message that tells the caller to run it again.
 */
export async function newTeammateModal(
  deps: CommandDeps,
  args: CommandArgs,
  input: { handle: string; via: 'link' | 'join'; create: () => Promise<NewTeammate> },
): Promise<void> {
  const { client, command, respond } = args;
  const say = (text: string) => respond({ response_type: 'ephemeral', text });
  let viewId: string;
  try {
    const opened = await client.views.open({ trigger_id: command.trigger_id, view: linkingModal(input.handle) });
    viewId = opened.view!.id!;
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === undefined) throw error;
    return void (await say(
      `Slack did not open the window for your key (${code}); nothing was created. Run \`/handoff ${input.via}\` again.`,
    ));
  }

  const result = await input.create();
  const { links } = deps;
  const view =
    'api_key' in result
      ? linkedModal({
          handle: result.handle,
          apiKey: result.api_key,
          snippets: deps.clientSetup({ relayUrl: links.publicUrl, apiKey: result.api_key, handle: result.handle }),
        })
      : linkFailedModal(result.problem);
  deps.log.info(
    {
      slack_user: command.user_id,
      handle: 'api_key' in result ? result.handle : input.handle,
      linked: 'api_key' in result,
      via: input.via,
    },
    'slack link',
  );
  try {
    await client.views.update({ view_id: viewId, view });
  } catch (error) {
    const code = slackErrorCode(error);
    if (code === undefined || !('api_key' in result)) throw error;
    // The key exists only in this process now; it is not sent anywhere else, so the teammate needs a new one.
    await say(
      `You are linked as \`${result.handle}\`, but Slack did not show your key (${code}). Ask an admin for a new key (it revokes the lost one).`,
    );
  }
}

/** Why a registration for this Slack user was refused, in words for the modal. */
export async function whyNotRegistered(
  deps: CommandDeps,
  slackUser: string,
  handle: string,
  error: RelayError,
  again: string,
): Promise<string> {
  // A concurrent link or join may have won: then this user is linked, just not by this call.
  const linked = await deps.teammates.bySlackUser(slackUser);
  if (linked) return `Your Slack account is already linked to teammate ${linked.handle}; no new key was made.`;
  // The link exists but its teammate is not readable yet (the winner is still writing it) or is disabled.
  const taken = error.code === 'conflict' ? (error.details as { field?: string } | undefined)?.field : undefined;
  if (taken === 'slack_user_id')
    return 'Your Slack account is already linked to a handoff-relay teammate; no new key was made.';
  if (taken === 'handle') return `The handle ${handle} is taken. Choose another: ${again}`;
  return error.message;
}
