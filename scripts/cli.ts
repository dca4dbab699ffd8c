#!/usr/bin/env -S node --max-semi-space-size=4
// The handoff-relay command line: `start` (with local services when none are configured), `migrate`, `register`,
// `invite`, `join`, `deliveries`, `policy`, `approvals`, `agent`, `rotate-key`, `audit`, `open`; `--help` on each (cli-help.ts).
import { join } from 'node:path';
import { ConfigError, loadClientConfig, loadConfig } from '../relay-core/ops/config';
import { ADMIN_KEY_FILE, readSecret } from './local-secrets';
import { startCommand, storeUrl } from './start-command';
import { newTeammateText } from './new-teammate-text';
import { cardFromOptions } from './card-options';
import { MongoStore } from '../relay-core/store/mongo-store';
import { migrateStore, SCHEMA_VERSION } from '../relay-core/store/migrate';
import { POLICY_COMMAND, policyCommand } from './policy-command';
import { APPROVALS_COMMAND, approvalsCommand } from './approvals-command';
import { AGENT_COMMAND, agentCommand } from './agent/agent-command';
import {
  AUDIT_COMMAND,
  OPEN_COMMAND,
  ROTATE_KEY_COMMAND,
  auditCommand,
  openCommand,
  rotateKeyCommand,
} from './teammate-commands';
import { INVITE_COMMAND, JOIN_COMMAND, inviteCommand, joinCommand } from './invite-commands';
import { UsageError, closest, commandHelp, overviewHelp, parseOptions, wantsHelp, type CommandSpec } from './cli-help';

const START_COMMAND = {
  name: 'start',
  summary:
    'run the relay (every role unless RELAY_ROLES says otherwise); starts FerretDB and Redis here when none are configured',
  usage: ['start'],
  options: {},
  examples: [
    'handoff-relay start',
    'MONGODB_URL=mongodb://db:27017 REDIS_URL=redis://cache:6379 RELAY_ROLES=api handoff-relay start',
  ],
  env: 'PORT, HOST, MONGODB_URL, REDIS_URL, RELAY_ADMIN_KEY, RELAY_ROLES, RELAY_DATA_DIR, SLACK_* (docs/configuration.md)',
} satisfies CommandSpec;

const MIGRATE_COMMAND = {
  name: 'migrate',
  summary: "bring the database up to this version's layout (start does it too)",
  usage: ['migrate'],
  options: {},
  examples: ['MONGODB_URL=mongodb://db:27017 handoff-relay migrate'],
  env: 'MONGODB_URL (or the embedded FerretDB under RELAY_DATA_DIR)',
} satisfies CommandSpec;

const REGISTER_COMMAND = {
  name: 'register',
  summary: 'create a teammate; prints its API key once and the MCP configuration to paste (admin key)',
  usage: [
    'register --handle NAME@TEAM --name "Display name" --role ROLE [--slack-user U0123456] [--skills a,b]\n' +
      '                       [--repos apps/web/,docs/] [--tools git,npm] [--lead LEAD@TEAM]',
  ],
  options: {
    handle: { type: 'string', value: 'NAME@TEAM', description: "the teammate's handle (required)" },
    name: { type: 'string', value: 'TEXT', description: 'display name (required)' },
    role: { type: 'string', value: 'ROLE', description: 'role, e.g. backend (required)' },
    'slack-user': { type: 'string', value: 'U0123456', description: 'the Slack user to link' },
    skills: { type: 'string', value: 'a,b', description: 'skills (comma-separated)' },
    repos: {
      type: 'string',
      value: 'P,P',
      description: 'owned repos or paths (comma-separated; a trailing / owns what is below)',
    },
    tools: { type: 'string', value: 'a,b', description: 'tools the agent has (comma-separated)' },
    lead: { type: 'string', value: 'LEAD@TEAM', description: "the teammate's lead (registered already)" },
  },
  examples: [
    'handoff-relay register --handle frank@acme --name "Frank" --role backend --skills go,sql --repos services/api/',
  ],
  env: 'RELAY_URL, RELAY_ADMIN_KEY (or the key file `npm start` wrote)',
} satisfies CommandSpec;

const DELIVERIES_COMMAND = {
  name: 'deliveries',
  summary: 'webhook dead letters: list them, re-drive one, or re-drive all (admin key)',
  usage: ['deliveries --failed [--handle NAME@TEAM] | --redrive ID | --redrive-all'],
  options: {
    failed: { type: 'boolean', description: 'list the deliveries that gave up' },
    handle: { type: 'string', value: 'NAME@TEAM', description: "with --failed: only this teammate's" },
    redrive: { type: 'string', value: 'ID', description: 'send one failed delivery again' },
    'redrive-all': { type: 'boolean', description: 'send every failed delivery again' },
  },
  examples: ['handoff-relay deliveries --failed --handle frank@acme', 'handoff-relay deliveries --redrive-all'],
  env: 'RELAY_URL, RELAY_ADMIN_KEY (or the key file `npm start` wrote)',
} satisfies CommandSpec;

/** Every command, in the order help lists them. */
const COMMANDS: CommandSpec[] = [
  START_COMMAND,
  MIGRATE_COMMAND,
  REGISTER_COMMAND,
  INVITE_COMMAND,
  JOIN_COMMAND,
  DELIVERIES_COMMAND,
  POLICY_COMMAND,
  APPROVALS_COMMAND,
  AGENT_COMMAND,
  ROTATE_KEY_COMMAND,
  AUDIT_COMMAND,
  OPEN_COMMAND,
];

const say = (line: string) => process.stderr.write(`${line}\n`);

/** Brings the database up to this version's layout (start does the same before it serves). */
async function migrate(): Promise<void> {
  const config = loadConfig(process.env);
  const stops: Array<() => Promise<void>> = [];
  try {
    const store = await MongoStore.connect(await storeUrl(config, stops, say), config.mongodbDb);
    stops.unshift(() => store.close());
    const touched = await migrateStore(store, say);
    await store.ensureIndexes();
    say(
      touched === 0
        ? `migrate: nothing to do (layout ${SCHEMA_VERSION})`
        : `migrate: done, ${touched.toLocaleString('en')} threads updated`,
    );
  } finally {
    for (const stop of stops) await stop();
  }
}

async function register(argv: string[]): Promise<void> {
  const { values } = parseOptions(REGISTER_COMMAND.name, REGISTER_COMMAND.options, argv);
  for (const required of ['handle', 'name', 'role'] as const) {
    if (!values[required]) throw new UsageError(`--${required} is required`);
  }
  const { client, adminKey } = await adminClient();
  const body = { ...cardFromOptions(values), slack_user_id: values['slack-user'] };
  let response: Response;
  try {
    response = await fetch(`${client.relayUrl}/admin/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new UsageError(
      `cannot reach the relay at ${client.relayUrl} (${(error as Error).message}); is \`npm start\` running? (RELAY_URL)`,
    );
  }
  const answer = (await response.json().catch(() => ({}))) as { api_key?: string; handle?: string; message?: string };
  if (!response.ok || !answer.api_key) {
    throw new UsageError(`the relay refused: ${answer.message ?? `HTTP ${response.status}`}`);
  }
  process.stdout.write(newTeammateText(client.relayUrl, { handle: answer.handle!, api_key: answer.api_key }));
}

/** The relay URL and admin key the admin commands use (RELAY_URL, RELAY_ADMIN_KEY or the generated key file). */
async function adminClient() {
  const client = loadClientConfig(process.env);
  const adminKey = client.adminKey ?? (await readSecret(client.dataDir, ADMIN_KEY_FILE));
  if (!adminKey) {
    throw new UsageError(
      `RELAY_ADMIN_KEY is not set and ${join(client.dataDir, ADMIN_KEY_FILE)} does not exist (run \`npm start\` once, or set RELAY_ADMIN_KEY)`,
    );
  }
  return { client, adminKey };
}

/** One admin call; a refusal becomes a UsageError carrying the relay's message. */
async function adminCall(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<any> {
  const { client, adminKey } = await adminClient();
  let response: Response;
  try {
    const json: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    response = await fetch(`${client.relayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, ...json },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new UsageError(
      `cannot reach the relay at ${client.relayUrl} (${(error as Error).message}); is \`npm start\` running? (RELAY_URL)`,
    );
  }
  const answer = (await response.json().catch(() => ({}))) as { message?: string };
  if (!response.ok) throw new UsageError(`the relay refused: ${answer.message ?? `HTTP ${response.status}`}`);
  return answer;
}

interface DeliveryLine {
  id: string;
  event_type: string;
  thread_id: string;
  handle: string;
  status: string;
  attempts: Array<{ at: string; outcome: string; http_status: number | null; error: string | null }>;
}

async function deliveries(argv: string[]): Promise<void> {
  const { values } = parseOptions(DELIVERIES_COMMAND.name, DELIVERIES_COMMAND.options, argv);
  const modes = [values.failed, values.redrive !== undefined, values['redrive-all']].filter(Boolean).length;
  if (modes !== 1) throw new UsageError('deliveries needs exactly one of --failed, --redrive ID, --redrive-all');
  if (values.redrive !== undefined) {
    const answer = (await adminCall(
      'POST',
      `/admin/deliveries/${encodeURIComponent(values.redrive)}/redrive`,
    )) as DeliveryLine;
    process.stdout.write(`Re-driving ${answer.id} (${answer.event_type} to ${answer.handle}).\n`);
    return;
  }
  if (values['redrive-all']) {
    const answer = (await adminCall('POST', '/admin/deliveries/redrive-all')) as { redriven: number };
    process.stdout.write(`Re-driving ${answer.redriven} failed deliveries.\n`);
    return;
  }
  const query = new URLSearchParams({ status: 'failed', ...(values.handle ? { handle: values.handle } : {}) });
  const { deliveries: failed } = (await adminCall('GET', `/admin/deliveries?${query}`)) as {
    deliveries: DeliveryLine[];
  };
  if (failed.length === 0) {
    process.stdout.write('No failed deliveries.\n');
    return;
  }
  for (const d of failed) {
    const last = d.attempts[d.attempts.length - 1];
    const why = last
      ? `${last.http_status ? `HTTP ${last.http_status}` : ''}${last.http_status && last.error ? ' ' : ''}${last.error ?? ''}`
      : '';
    process.stdout.write(
      `${d.id}  ${d.event_type}  to ${d.handle}  thread ${d.thread_id}  ${d.attempts.length} attempts  last: ${last?.at ?? '-'} ${why}\n`,
    );
  }
}

/** Commands that take no options still refuse one, naming the help. */
function noOptions(spec: CommandSpec, argv: string[]): void {
  const { positionals } = parseOptions(spec.name, spec.options, argv);
  if (positionals.length > 0)
    throw new UsageError(`${spec.name} takes no arguments (handoff-relay ${spec.name} --help)`);
}

function unknownCommand(command: string): UsageError {
  const near = closest(command, [...COMMANDS.map((c) => c.name), 'help']);
  return new UsageError(
    `unknown command "${command}"${near ? `; did you mean ${near}?` : ''} (handoff-relay --help lists them)`,
  );
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const out = (text: string) => process.stdout.write(text);
  // Help before anything else: it needs no configuration, no key and no relay.
  if (command === undefined || command === '--help' || command === '-h' || (command === 'help' && rest.length === 0))
    return void out(overviewHelp(COMMANDS));
  if (command === 'help') {
    const spec = COMMANDS.find((c) => c.name === rest[0]);
    if (!spec) throw unknownCommand(rest[0]!);
    return void out(commandHelp(spec));
  }
  const spec = COMMANDS.find((c) => c.name === command);
  if (!spec)
    throw command.startsWith('-')
      ? new UsageError(`unknown option ${command}; a command comes first (handoff-relay --help)`)
      : unknownCommand(command);
  if (wantsHelp(rest)) return void out(commandHelp(spec));
  const fail = (message: string) => new UsageError(message);
  switch (command) {
    case 'start':
      noOptions(spec, rest);
      return void (await startCommand({ env: process.env, say }));
    case 'migrate':
      noOptions(spec, rest);
      return migrate();
    case 'register':
      return register(rest);
    case 'invite':
      return inviteCommand(rest, adminCall, out, fail);
    case 'join':
      return joinCommand(rest, { env: process.env, out, fail });
    case 'deliveries':
      return deliveries(rest);
    case 'policy':
      return policyCommand(rest, adminCall, out, fail);
    case 'approvals':
      return approvalsCommand(rest, adminCall, out, fail);
    case 'agent':
      return agentCommand(rest, { env: process.env, say, fail });
    case 'rotate-key':
      return rotateKeyCommand(rest, { env: process.env, out, fail });
    case 'audit':
      return auditCommand(rest, { env: process.env, out, fail });
    case 'open':
      return openCommand(rest, { env: process.env, out, fail });
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof UsageError) {
    say(`handoff-relay: ${error.message}`);
  } else {
    say(`handoff-relay: ${(error as Error).message ?? String(error)}`);
  }
  process.exit(1);
});
