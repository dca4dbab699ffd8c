// The command line's one declaration per command (usage, options, examples): `--help` and `help <command>` print it
// and the option parser reads it, so help never needs a relay or configuration and an unknown option names the
// closest real one.
import { parseArgs } from 'node:util';

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** What the value stands for in help (`--handle NAME@TEAM`). */
  value?: string;
  short?: string;
  description: string;
}

export interface CommandSpec {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Usage lines, without the leading `handoff-relay ` (a `\n` wraps one). */
  usage: string[];
  options: Record<string, OptionSpec>;
  examples: string[];
  /** Environment variables the command reads. */
  env?: string;
}

export class UsageError extends Error {}

const HELP_FLAGS = new Set(['--help', '-h']);

/** Whether `argv` asks for help (`--help` or `-h` anywhere before a `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((arg) => HELP_FLAGS.has(arg));
}

export function commandHelp(spec: CommandSpec): string {
  // A usage line may wrap: its continuation (after a newline) is aligned under the command's arguments.
  const indent = ' '.repeat(`  handoff-relay ${spec.name} `.length);
  const usage = spec.usage.map(
    (u) =>
      `  handoff-relay ${u
        .split('\n')
        .map((part) => part.trim())
        .join(`\n${indent}`)}`,
  );
  const lines = ['Usage:', ...usage, '', spec.summary];
  const options = Object.entries(spec.options);
  const left = [
    ...options.map(([name, o]) => `${o.short ? `-${o.short}, ` : ''}--${name}${o.value ? ` ${o.value}` : ''}`),
    '-h, --help',
  ];
  const descriptions = [...options.map(([, o]) => o.description), 'print this help'];
  const width = Math.max(...left.map((l) => l.length)) + 2;
  lines.push('', 'Options:', ...left.map((l, i) => `  ${l.padEnd(width)}${descriptions[i]}`));
  if (spec.env) lines.push('', `Environment: ${spec.env}`);
  if (spec.examples.length > 0) lines.push('', 'Examples:', ...spec.examples.map((e) => `  ${e}`));
  return `${lines.join('\n')}\n`;
}

export function overviewHelp(specs: readonly CommandSpec[]): string {
  const width = Math.max(...specs.map((s) => s.name.length)) + 2;
  return [
    'Usage: handoff-relay <command> [options]',
    '',
    'Commands:',
    ...specs.map((s) => `  ${s.name.padEnd(width)}${s.summary}`),
    `  ${'help'.padEnd(width)}print the help of a command (handoff-relay help register)`,
    '',
    'Every command takes --help (-h): its usage, options and examples, with no relay or configuration needed.',
    'Environment: see docs/configuration.md (PORT, HOST, MONGODB_URL, REDIS_URL, RELAY_ADMIN_KEY, RELAY_API_KEY, SLACK_*, RELAY_URL, …)',
    '',
  ].join('\n');
}

/** Edit distance between two short words (option and command names). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** The candidate nearest `word`, when it is near enough to be what was meant (or `word` is a prefix of it). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = name.startsWith(word) ? 0 : distance(word, name);
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(2, Math.floor(best.name.length / 3)) ? best.name : undefined;
}

type Parsed<O extends Record<string, OptionSpec>> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/**
 * parseArgs over `options` (a command's, or the part of them one of its subcommands takes); an unknown option or a
 * missing value is a UsageError naming the closest valid option and where the help is.
 */
export function parseOptions<O extends Record<string, OptionSpec>>(
  command: string,
  options: O,
  argv: string[],
): Parsed<O> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const more = `(handoff-relay ${command} --help)`;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const given = /'([^']+)'/.exec((error as Error).message)?.[1] ?? '';
      const near = closest(given.replace(/^-+/, '').split('=')[0]!, [...Object.keys(options), 'help']);
      throw new UsageError(`${command}: unknown option ${given}${near ? `; did you mean --${near}?` : ''} ${more}`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
      throw new UsageError(`${command}: ${(error as Error).message} ${more}`);
    throw error;
  }
}

/** Every one of `names` that `values` lacks, named together in one UsageError (not one per attempt). */
export function requireOptions(command: string, values: Record<string, unknown>, names: readonly string[]): void {
  const missing = names.filter((name) => values[name] === undefined || values[name] === '').map((name) => `--${name}`);
  if (missing.length === 0) return;
  const list = missing.length === 1 ? missing[0] : `${missing.slice(0, -1).join(', ')} and ${missing.at(-1)}`;
  throw new UsageError(
    `${command}: ${list} ${missing.length === 1 ? 'is' : 'are'} required (handoff-relay ${command} --help)`,
  );
}
