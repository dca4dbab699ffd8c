// Every command's declaration (usage, options, examples), in the order help lists them. Help and the option parser
// read only this file, so `--help` loads no command's code; cli.ts loads a command's module when that command runs.
import type { CommandSpec, OptionSpec } from './cli-help';

export const START_COMMAND = {
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

export const MIGRATE_COMMAND = {
  name: 'migrate',
  summary: "bring the database up to this version's layout (start does it too)",
  usage: ['migrate'],
  options: {},
  examples: ['MONGODB_URL=mongodb://db:27017 handoff-relay migrate'],
  env: 'MONGODB_URL (or the embedded FerretDB under RELAY_DATA_DIR)',
} satisfies CommandSpec;

export const REGISTER_COMMAND = {
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

const CARD_OPTIONS = {
  role: { type: 'string', value: 'ROLE', description: 'role, e.g. backend' },
  skills: { type: 'string', value: 'a,b', description: 'skills (comma-separated)' },
  repos: {
    type: 'string',
    value: 'P,P',
    description: 'owned repos or paths (comma-separated; a trailing / owns what is below)',
  },
  lead: { type: 'string', value: 'LEAD@TEAM', description: "the teammate's lead (registered already)" },
} as const;

export const INVITE_COMMAND = {
  name: 'invite',
  summary: 'make a single-use, expiring invitation (prints its code once); list or revoke invitations (admin key)',
  usage: [
    'invite [--team TEAM] [--role ROLE] [--skills a,b] [--repos P,P] [--lead LEAD@TEAM] [--expires 7d] [--note TEXT]',
    'invite --list',
    'invite --revoke ID',
  ],
  options: {
    team: { type: 'string', value: 'TEAM', description: 'the team the invitee joins (its handle must end in @TEAM)' },
    role: { type: 'string', value: 'ROLE', description: 'the role the invitee gets (else it chooses one)' },
    skills: { type: 'string', value: 'a,b', description: "skills added to the invitee's own (comma-separated)" },
    repos: { type: 'string', value: 'P,P', description: "owned paths added to the invitee's own (comma-separated)" },
    lead: { type: 'string', value: 'LEAD@TEAM', description: 'the lead the invitee gets (registered already)' },
    expires: {
      type: 'string',
      value: 'DURATION',
      description: 'how long the code works: 30m, 24h, 7d (the default; at most 30d)',
    },
    note: { type: 'string', value: 'TEXT', description: 'who it is for, shown in the list' },
    list: { type: 'boolean', description: 'list invitations, newest first (never their codes)' },
    revoke: { type: 'string', value: 'ID', description: 'revoke an open invitation by its id' },
  },
  examples: [
    'handoff-relay invite --team acme --role backend --skills go,sql --expires 48h --note "Frank, new backend"',
    'handoff-relay invite --list',
    'handoff-relay invite --revoke 3f9a0c1d2e4b',
  ],
  env: 'RELAY_URL, RELAY_ADMIN_KEY (or the key file `npm start` wrote)',
} satisfies CommandSpec;

export const JOIN_COMMAND = {
  name: 'join',
  summary:
    'redeem an invitation: choose your handle and card; prints your API key once and the MCP configuration to paste',
  usage: [
    'join INVITE_CODE --handle NAME[@TEAM] --name "Display name" [--role ROLE] [--skills a,b] [--repos P,P]\n' +
      '                   [--tools git,npm] [--lead LEAD@TEAM]',
  ],
  options: {
    handle: {
      type: 'string',
      value: 'NAME@TEAM',
      description: 'your handle (required; NAME alone when the invitation names the team)',
    },
    name: { type: 'string', value: 'TEXT', description: 'your display name (required)' },
    ...CARD_OPTIONS,
    role: { type: 'string', value: 'ROLE', description: 'your role (required unless the invitation sets it)' },
    tools: { type: 'string', value: 'a,b', description: 'tools your agent has (comma-separated)' },
  },
  examples: ['handoff-relay join hri_3f9a0c1d2e4b_… --handle frank --name "Frank" --skills go,sql'],
  env: 'RELAY_URL (no key: the invitation is the credential)',
} satisfies CommandSpec;

export const DELIVERIES_COMMAND = {
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

export const POLICY_AUDIT_OPTIONS = {
  limit: { type: 'string', value: 'N', description: 'audit: how many refused calls, newest first' },
} satisfies Record<string, OptionSpec>;

export const POLICY_TEST_OPTIONS = {
  action: { type: 'string', value: 'ACTION', description: 'test: the call to try (handoff.create, handoff.accept, …)' },
  from: { type: 'string', value: 'A@T', description: "test: the handoff's sender" },
  to: { type: 'string', value: 'B@T', description: "test: the handoff's recipient" },
  actor: { type: 'string', value: 'H', description: 'test: who makes the call (the sender by default)' },
  via: { type: 'string', value: 'SURFACE', description: 'test: mcp, a2a, slack or rest' },
  intent: { type: 'string', value: 'I', description: 'test: inform, ask_question or propose_action' },
  artifacts: { type: 'string', value: 'T,T', description: 'test: artifact types attached (comma-separated)' },
  files: { type: 'string', value: 'P,P', description: 'test: target files (comma-separated)' },
  at: { type: 'string', value: 'ISO', description: 'test: the time of the call (now by default)' },
  file: { type: 'string', value: 'FILE', description: 'test: try this policy file instead of the applied one' },
} satisfies Record<string, OptionSpec>;

export const POLICY_COMMAND: CommandSpec = {
  name: 'policy',
  summary: 'read, validate, replace or try out the policy; list the calls it refused (admin key)',
  usage: [
    'policy show | check FILE | apply FILE | audit [--limit N]',
    'policy test --action ACTION --from A@T --to B@T [--actor H] [--via mcp|a2a|slack|rest] [--intent I]\n' +
      '                     [--artifacts file_diff,link] [--files infra/a.tf,…] [--at ISO] [--file FILE]',
  ],
  options: { ...POLICY_AUDIT_OPTIONS, ...POLICY_TEST_OPTIONS },
  examples: [
    'handoff-relay policy check policy.yaml',
    'handoff-relay policy apply policy.yaml',
    'handoff-relay policy test --action handoff.accept --from alice@acme --to bob@acme --via mcp',
    'handoff-relay policy audit --limit 20',
  ],
  env: 'RELAY_URL, RELAY_ADMIN_KEY (or the key file `npm start` wrote); check needs neither',
};

export const APPROVALS_COMMAND = {
  name: 'approvals',
  summary: 'list approvals; decide one as approver WHO (a handle or a Slack user id) (admin key)',
  usage: [
    'approvals list [--status pending|approved|rejected|timed_out] [--approver WHO]',
    'approvals approve ID --as WHO',
    'approvals reject ID --as WHO --reason TEXT',
  ],
  options: {
    status: { type: 'string', value: 'STATUS', description: 'list: pending, approved, rejected or timed_out' },
    approver: { type: 'string', value: 'WHO', description: 'list: only approvals WHO may decide' },
    as: { type: 'string', value: 'WHO', description: 'approve/reject: the approver you act for' },
    reason: { type: 'string', value: 'TEXT', description: 'reject: why (the sender is told)' },
  },
  examples: [
    'handoff-relay approvals list --status pending',
    'handoff-relay approvals approve 3f2a… --as carol@acme',
    'handoff-relay approvals reject 3f2a… --as carol@acme --reason "not during the freeze"',
  ],
  env: 'RELAY_URL, RELAY_ADMIN_KEY (or the key file `npm start` wrote)',
} satisfies CommandSpec;

export const AGENT_COMMAND = {
  name: 'agent',
  summary: 'run the handoffs handed to your agent on this machine; stop a run (your API key; docs/agent-runner.md)',
  usage: ['agent [--config handoff-agent.yaml]', 'agent stop RUN_ID'],
  options: {
    config: {
      type: 'string',
      value: 'FILE',
      description: "the runner's config (YAML or JSON); handoff-agent.yaml by default",
    },
  },
  examples: [
    'RELAY_API_KEY=hr_… handoff-relay agent --config handoff-agent.yaml',
    'RELAY_API_KEY=hr_… handoff-relay agent stop 5b1c…',
  ],
  env: 'RELAY_URL, RELAY_API_KEY (the runner acts as you)',
} satisfies CommandSpec;

export const ROTATE_KEY_COMMAND = {
  name: 'rotate-key',
  summary: 'replace your API key: prints the new one once; the old one is refused from then on',
  usage: ['rotate-key'],
  options: {},
  examples: ['RELAY_API_KEY=hr_… handoff-relay rotate-key'],
  env: 'RELAY_URL, RELAY_API_KEY (the key to replace)',
} satisfies CommandSpec;

export const AUDIT_COMMAND = {
  name: 'audit',
  summary:
    'your own history on the relay, newest first: handoffs, transitions, messages, key rotations, blocks, policy refusals',
  usage: ['audit [--limit N] [--cursor CURSOR] [--all]'],
  options: {
    limit: { type: 'string', value: 'N', description: 'events per page (1-200, 50 by default)' },
    cursor: { type: 'string', value: 'CURSOR', description: 'continue after a page (its last line prints the cursor)' },
    all: { type: 'boolean', description: 'walk every page' },
  },
  examples: ['RELAY_API_KEY=hr_… handoff-relay audit --limit 20', 'RELAY_API_KEY=hr_… handoff-relay audit --all'],
  env: 'RELAY_URL, RELAY_API_KEY',
} satisfies CommandSpec;

export const OPEN_COMMAND = {
  name: 'open',
  summary: 'print a one-time link that signs a browser in to your web inbox (works once, for ten minutes)',
  usage: ['open'],
  options: {},
  examples: ['RELAY_API_KEY=hr_… handoff-relay open'],
  env: 'RELAY_URL, RELAY_API_KEY',
} satisfies CommandSpec;

/** Every command, in the order help lists them. */
export const COMMANDS: CommandSpec[] = [
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
