// /handoff: acks at once, then answers through response_url (or opens a modal within the trigger's 3 seconds).
import type { RespondFn } from '@slack/bolt';
import type { AgentDoc } from '../../../relay-core/domain/documents';
import { RelayError } from '../../../relay-core/domain/errors';
import type { Relay } from '../../../relay-core/service/relay-service';
import { newHandoffSchema } from '../../../relay-core/domain/schemas';
import { inboxMessage, INBOX_PAGE_SIZE } from '../../views/home';
import type { CommandArgs, CommandDeps } from './command-args';
import { channelCommand } from './channel-command';
import { inviteCommand } from './invite-command';
import { joinCommand } from './join-command';
import { linkCommand } from './link-command';
import { openNewHandoffModal } from './new-handoff-command';
import { parseHandoffCommand, type Recipient } from './parse-command';

// Subcommands: none (new-handoff modal), `@someone text` / `role:x text` (quick inform), inbox, link, join, invite,
// channel, help.

export const HANDOFF_COMMAND = '/handoff';

export const HANDOFF_HELP =
  '*handoff-relay* — hand work to a teammate (and their agent)\n' +
  '• `/handoff` — open a form: recipient, intent (inform, ask a question, propose an action), summary, links.\n' +
  '• `/handoff @someone what to hand over` — send a quick _inform_ handoff (also `/handoff name@team …`).\n' +
  '• `/handoff role:frontend …` (or `skill:react`, `owner:apps/web/`) — hand it to whoever fits: one match gets it, several can *Claim* it.\n' +
  '• `/handoff channel role:frontend` — run in a channel: handoffs to that target land there with *Claim* (`channel unbind …`, `channel list`).\n' +
  '• `/handoff inbox` — your pending and accepted handoffs, with their buttons (and Claim on unclaimed ones you are a candidate for).\n' +
  '• `/handoff link [handle]` — link your Slack account to a new teammate and get its API key and MCP configuration, once.\n' +
  '• `/handoff join CODE [handle]` — redeem an invitation: your Slack account becomes the invited teammate; its API key and MCP configuration are shown once.\n' +
  '• `/handoff invite [role:backend] [skills:go,sql] [expires:48h] [note:…]` — workspace admins: make a single-use invitation code (`/handoff invite help`).\n' +
  '• `/handoff help` — this help.\n' +
  'The *Home* tab of handoff-relay lists what waits for you and what you sent.';

export const NOT_LINKED =
  'Your Slack account is not linked to a handoff-relay teammate, so you cannot send or act on handoffs yet. ' +
  'Run `/handoff link` to create your teammate (or `/handoff link your-name` to choose its handle).';

export function handoffCommand(deps: CommandDeps) {
  return async (args: CommandArgs): Promise<void> => {
    const { ack, command, respond } = args;
    await ack();
    const say = (text: string) => respond({ response_type: 'ephemeral', text });
    const parsed = parseHandoffCommand(command.text ?? '');
    switch (parsed.kind) {
      case 'help':
        return void (await say(HANDOFF_HELP));
      case 'unknown':
        return void (await say(`\`/handoff ${parsed.word}\` is not a handoff-relay command.\n\n${HANDOFF_HELP}`));
      case 'unresolved_mention':
        return void (await say(
          `Slack sent \`${parsed.name}\` as plain text, so it names nobody handoff-relay can resolve. ` +
            "Pick the person from Slack's autocomplete list (the app's command must escape mentions), or use their handle, e.g. `/handoff bob@acme …`.",
        ));
      case 'link':
        return linkCommand(deps, args, parsed.handle);
      case 'join':
        return joinCommand(deps, args, parsed);
      case 'invite':
        return inviteCommand(deps, args, parsed.options);
    }
    const caller = await deps.teammates.bySlackUser(command.user_id);
    if (!caller) return void (await say(NOT_LINKED));
    switch (parsed.kind) {
      case 'modal':
        return openNewHandoffModal(args, say);
      case 'inbox':
        return inbox(deps, caller, respond);
      case 'send':
        return quickSend(deps, caller, parsed.to, parsed.text, command.trigger_id, say);
      case 'channel':
        return channelCommand(deps, args, caller, parsed, say);
    }
  };
}

async function inbox(
  { reads, links }: Pick<Relay, 'reads' | 'links'>,
  caller: AgentDoc,
  respond: RespondFn,
): Promise<void> {
  const page = await reads.listThreads(caller, {
    role: 'recipient',
    status: ['unclaimed', 'pending', 'accepted'],
    limit: INBOX_PAGE_SIZE,
  });
  const message = inboxMessage({ handle: caller.handle, page, inboxUrl: (id) => links.url(id, caller.handle) });
  await respond({ response_type: 'ephemeral', replace_original: false, ...message });
}

async function quickSend(
  { teammates, creates }: Pick<Relay, 'teammates' | 'creates'>,
  caller: AgentDoc,
  to: Recipient,
  summary: string,
  triggerId: string,
  say: (text: string) => Promise<unknown>,
): Promise<void> {
  if (!summary) return void (await say('Say what you hand over: `/handoff @someone what they need to know`.'));
  let handle: string;
  if ('slackUser' in to) {
    const recipient = await teammates.bySlackUser(to.slackUser);
    if (!recipient) {
      return void (await say(
        `<@${to.slackUser}> has no handoff-relay teammate linked to their Slack account, so nothing was sent. They can run \`/handoff link\`.`,
      ));
    }
    handle = recipient.handle;
  } else {
    handle = to.handle;
  }
  // A slash command is never retried by Slack; the trigger id still makes a doubled delivery one handoff.
  const input = newHandoffSchema.safeParse({
    to: handle,
    intent: 'inform',
    summary,
    idempotency_key: `slack-command:${triggerId}`,
  });
  if (!input.success) {
    const issue = input.error.issues[0]!;
    return void (await say(
      `Nothing was sent: ${issue.path[0] === 'to' ? 'the recipient' : 'the text'} ${issue.message}.`,
    ));
  }
  try {
    const created = await creates.create(caller, input.data, 'slack');
    const to =
      created.status.state === 'unclaimed'
        ? `\`${created.recipient}\` (unclaimed: ${created.candidates?.length} teammates can claim it)`
        : `\`${created.recipient}\``;
    if (created.approval) {
      const approvers = created.approval.approvers.map((a) => `\`${a}\``).join(', ');
      await say(
        `:raised_hand: Your handoff to ${to} is waiting for approval by ${approvers} (policy rule \`${created.approval.rule_id}\`); it is delivered once approved. <${created.inbox_url}|View it in the inbox>`,
      );
      return;
    }
    await say(`:outbox_tray: Sent to ${to} as an _inform_ handoff. <${created.inbox_url}|View it in the inbox>`);
  } catch (error) {
    if (error instanceof RelayError) return void (await say(`Nothing was sent: ${error.message}.`));
    throw error;
  }
}
