// `/handoff invite [team:acme] [role:backend] …`: a workspace admin or owner (users.info's is_admin / is_owner) makes
// a single-use, expiring invitation; its code is shown once, to them alone, and never logged.
import { inviteCreateSchema, type InviteCreate } from '../../../relay-core/domain/invite';
import { RelayError } from '../../../relay-core/domain/errors';
import { escapeMrkdwn } from '../../blocks/mrkdwn';
import type { CommandArgs, CommandDeps } from './command-args';
import { slackProfile } from './new-teammate-modal';

export const INVITE_USAGE =
  '`/handoff invite [team:acme] [role:backend] [skills:go,sql] [repos:services/api/] [lead:lena@acme] [expires:48h] [note:who it is for]` ' +
  '(workspace admins and owners) makes a single-use invitation, valid 7 days unless `expires:` says (at most 30d), and shows its code once; ' +
  'the invitee runs `/handoff join CODE`. `note:` takes the rest of the line.';

/** Each option as typed, and the field of POST /admin/invites it sets. */
const OPTION_FIELDS = {
  team: 'team',
  role: 'role',
  skills: 'skills',
  repos: 'repos_owned',
  lead: 'lead',
  expires: 'expires_in',
  note: 'note',
} as const;
type OptionName = keyof typeof OPTION_FIELDS;
const LIST_OPTIONS = new Set<OptionName>(['skills', 'repos']);
const OPTION_NAMES = Object.keys(OPTION_FIELDS)
  .map((o) => `\`${o}:\``)
  .join(', ');

const isOption = (word: string): word is OptionName => Object.hasOwn(OPTION_FIELDS, word);
const optionOf = (field: string) =>
  (Object.entries(OPTION_FIELDS).find(([, f]) => f === field)?.[0] ?? field) as string;

/** `team:acme skills:go,sql note:Frank, new backend` as the invitation's fields, or what is wrong with it. */
export function parseInviteOptions(text: string): { input: InviteCreate } | { problem: string } {
  const body: Record<string, unknown> = {};
  let rest = text.trim();
  while (rest) {
    const word = /^\S+/.exec(rest)![0];
    const option = /^([A-Za-z_]+):(.*)$/s.exec(word);
    const name = option?.[1]!.toLowerCase() ?? '';
    if (!option || !isOption(name))
      return {
        problem: `\`${escapeMrkdwn(word.slice(0, 40))}\` is not an option of \`/handoff invite\`; the options are ${OPTION_NAMES}`,
      };
    // The note is the rest of the line, spaces and all.
    const value = name === 'note' ? rest.slice(rest.indexOf(':') + 1).trim() : option[2]!;
    rest = name === 'note' ? '' : rest.slice(word.length).trim();
    const items = value.split(',').filter(Boolean);
    if (!value || items.length === 0)
      return { problem: `\`${name}:\` needs a value, e.g. \`${name}:${name === 'expires' ? '48h' : '…'}\`` };
    const field = OPTION_FIELDS[name];
    if (field in body) return { problem: `\`${name}:\` is given twice` };
    body[field] = LIST_OPTIONS.has(name) ? items : value;
  }
  const parsed = inviteCreateSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { problem: `\`${optionOf(String(issue.path[0] ?? ''))}:\` ${issue.message}` };
  }
  return { input: parsed.data };
}

export async function inviteCommand(deps: CommandDeps, args: CommandArgs, options: string): Promise<void> {
  const { command, respond } = args;
  const say = (text: string) => respond({ response_type: 'ephemeral', text });
  if (options.trim().toLowerCase() === 'help') return void (await say(INVITE_USAGE));
  const profile = await slackProfile(args);
  if ('slackError' in profile) {
    return void (await say(
      `Slack did not say whether you are a workspace admin (${profile.slackError}); nothing was created. Try again.`,
    ));
  }
  if (!profile.isAdmin) {
    return void (await say(
      'Only a workspace admin or owner can make invitations from Slack; nothing was created. Ask one of them, or an admin of the relay (`handoff-relay invite`).',
    ));
  }
  const parsed = parseInviteOptions(options);
  if ('problem' in parsed) return void (await say(`Nothing was created: ${parsed.problem}.\n${INVITE_USAGE}`));
  let created;
  try {
    created = await deps.invites.create(parsed.input, command.user_id);
  } catch (error) {
    if (!(error instanceof RelayError)) throw error;
    // The service names body fields (body.lead: …); here they are the options typed.
    const message = error.message.replace(/^body\.([a-z_]+):/, (_m, field: string) => `\`${optionOf(field)}:\``);
    return void (await say(`Nothing was created: ${message}.`));
  }
  const preset = Object.entries(created.preset)
    .map(([k, v]) => `${optionOf(k)} ${Array.isArray(v) ? v.join(',') : v}`)
    .join('; ');
  await say(
    `:envelope_with_arrow: Invitation \`${created.id}\`, single use, expires ${created.expires_at}` +
      `${preset ? ` (${escapeMrkdwn(preset)})` : ''}${created.note ? `, for “${escapeMrkdwn(created.note)}”` : ''}.\n` +
      `*Invite code* (shown only now; send it to the invitee privately):\n\`${created.token}\`\n` +
      `They join in Slack with \`/handoff join ${created.token}\` (a handle may follow), ` +
      `or from a terminal with \`handoff-relay join ${created.token} --handle NAME --name "Their name"\`.`,
  );
}
