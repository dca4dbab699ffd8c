// `handoff-relay invite` (an admin makes, lists or revokes invitations) and `handoff-relay join` (an invitee redeems
// one: it chooses its handle and card and gets its API key once, with the MCP configuration `register` prints).
import { INVITE_CODE_PATTERN, type InviteView } from '../relay-core/domain/invite';
import { loadClientConfig } from '../relay-core/ops/config';
import { parseOptions, requireOptions } from './cli-help';
import { INVITE_COMMAND, JOIN_COMMAND } from './cli-commands';
import { newTeammateText } from './new-teammate-text';
import { cardFromOptions, commaList } from './card-options';
import type { AdminCall } from './admin-commands';

function inviteLine(i: InviteView): string {
  const preset = Object.entries(i.preset)
    .map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(',') : v}`)
    .join('; ');
  const outcome = i.redeemed_by ? `  by ${i.redeemed_by}` : '';
  return `${i.id}  ${i.status.padEnd(8)}  expires ${i.expires_at}${outcome}${preset ? `  [${preset}]` : ''}${i.note ? `  "${i.note}"` : ''}\n`;
}

export async function inviteCommand(
  argv: string[],
  adminCall: AdminCall,
  out: (text: string) => void,
  fail: (message: string) => Error,
): Promise<void> {
  const { values, positionals } = parseOptions(INVITE_COMMAND.name, INVITE_COMMAND.options, argv);
  if (positionals.length > 0) throw fail(`invite: unexpected "${positionals[0]}" (handoff-relay invite --help)`);
  const presets = ['team', 'role', 'skills', 'repos', 'lead', 'expires', 'note'] as const;
  const modes = [values.list, values.revoke !== undefined, presets.some((p) => values[p] !== undefined)].filter(
    Boolean,
  ).length;
  if (modes > 1)
    throw fail('invite: --list, --revoke ID and making an invitation are separate calls (handoff-relay invite --help)');
  if (values.list) {
    const { invites } = (await adminCall('GET', '/admin/invites')) as { invites: InviteView[] };
    if (invites.length === 0) return void out('No invitations.\n');
    for (const i of invites) out(inviteLine(i));
    return;
  }
  if (values.revoke !== undefined) {
    const revoked = (await adminCall('DELETE', `/admin/invites/${encodeURIComponent(values.revoke)}`)) as InviteView;
    return void out(`Revoked invitation ${revoked.id}; its code is refused from now on.\n`);
  }
  const body = {
    team: values.team,
    role: values.role,
    skills: commaList(values.skills),
    repos_owned: commaList(values.repos),
    lead: values.lead,
    expires_in: values.expires,
    note: values.note,
  };
  const created = (await adminCall('POST', '/admin/invites', body)) as InviteView & {
    token: string;
    redeem_url: string;
  };
  const handle = created.preset.team ? 'NAME' : 'NAME@TEAM';
  const role = created.preset.role ? '' : ' --role ROLE';
  out(
    `Invitation ${created.id}, single use, expires ${created.expires_at}.\n\n` +
      `Invite code (shown once; send it to the invitee privately):\n  ${created.token}\n\n` +
      `They join with:\n  handoff-relay join ${created.token} --handle ${handle} --name "Their name"${role}\n` +
      `or POST ${created.redeem_url} with {"token": "<code>", "handle": …, "name": …}\n`,
  );
}

export interface JoinDeps {
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
  fail: (message: string) => Error;
}

export async function joinCommand(argv: string[], deps: JoinDeps): Promise<void> {
  const { values, positionals } = parseOptions(JOIN_COMMAND.name, JOIN_COMMAND.options, argv);
  if (positionals.length !== 1)
    throw deps.fail(
      'join needs the invite code you were given: handoff-relay join hri_… --handle NAME --name "Your name" (handoff-relay join --help)',
    );
  const code = positionals[0]!.trim();
  const id = INVITE_CODE_PATTERN.exec(code)?.[1];
  if (!id)
    throw deps.fail('join: that is not an invite code (it starts with hri_ and is 60 characters long); copy it whole');
  requireOptions(JOIN_COMMAND.name, values, ['handle', 'name']);
  const client = loadClientConfig(deps.env);
  const body = { token: code, ...cardFromOptions(values) };
  let response: Response;
  try {
    response = await fetch(`${client.relayUrl}/invites/${id}/redeem`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw deps.fail(
      `cannot reach the relay at ${client.relayUrl} (${(error as Error).message}); is it running? (RELAY_URL)`,
    );
  }
  const answer = (await response.json().catch(() => ({}))) as { api_key?: string; handle?: string; message?: string };
  if (!response.ok || !answer.api_key || !answer.handle)
    throw deps.fail(`the relay refused: ${answer.message ?? `HTTP ${response.status}`}`);
  deps.out(newTeammateText(client.relayUrl, { handle: answer.handle, api_key: answer.api_key }, 'Joined as'));
}
