#!/usr/bin/env -S node --max-semi-space-size=4
// The handoff-relay command line: `start` (with local services when none are configured), `migrate`, `register`,
// `invite`, `join`, `deliveries`, `policy`, `approvals`, `agent`, `rotate-key`, `audit`, `open`; `--help` on each
// (cli-commands.ts declares them). A command's module loads only when it runs: help, a typo or one command does not
// pay for loading the whole relay.
import { COMMANDS } from './cli-commands';
import { UsageError, closest, commandHelp, overviewHelp, parseOptions, wantsHelp, type CommandSpec } from './cli-help';

const say = (line: string) => process.stderr.write(`${line}\n`);

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
  return run(command, spec, rest, out);
}

/** Runs one command, loading its module now. */
async function run(command: string, spec: CommandSpec, rest: string[], out: (text: string) => void): Promise<void> {
  const env = process.env;
  const fail = (message: string) => new UsageError(message);
  const admin = async () => (await import('./admin-commands.js')).adminCaller(env);
  switch (command) {
    case 'start':
      noOptions(spec, rest);
      return void (await (await import('./start-command.js')).startCommand({ env, say }));
    case 'migrate':
      noOptions(spec, rest);
      return (await import('./migrate-command.js')).migrateCommand({ env, say });
    case 'register':
      return (await import('./admin-commands.js')).registerCommand(rest, { env, out });
    case 'invite':
      return (await import('./invite-commands.js')).inviteCommand(rest, await admin(), out, fail);
    case 'join':
      return (await import('./invite-commands.js')).joinCommand(rest, { env, out, fail });
    case 'deliveries':
      return (await import('./admin-commands.js')).deliveriesCommand(rest, await admin(), out);
    case 'policy':
      return (await import('./policy-command.js')).policyCommand(rest, await admin(), out, fail);
    case 'approvals':
      return (await import('./approvals-command.js')).approvalsCommand(rest, await admin(), out, fail);
    case 'agent':
      return (await import('./agent/agent-command.js')).agentCommand(rest, { env, say, fail });
    case 'rotate-key':
      return (await import('./teammate-commands.js')).rotateKeyCommand(rest, { env, out, fail });
    case 'audit':
      return (await import('./teammate-commands.js')).auditCommand(rest, { env, out, fail });
    case 'open':
      return (await import('./teammate-commands.js')).openCommand(rest, { env, out, fail });
  }
}

main().catch((error: unknown) => {
  // A UsageError or ConfigError says what to do; anything else is printed the same way.
  say(`handoff-relay: ${(error as Error).message ?? String(error)}`);
  process.exit(1);
});
