// `handoff-relay agent`'s local config file (YAML or JSON), validated once here: an error names the field.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { handleSchema, intentSchema } from '../../relay-core/domain/schemas';
import { durationSchema } from '../../relay-core/domain/duration';

/** What reaches the agent when the config names no `env`: enough to find programs and a home, none of the relay's secrets. */
export const DEFAULT_AGENT_ENV = ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'SHELL'];

/** Never passed to the agent, even when listed: the runner's own key, and the relay's secrets. */
const SECRET_ENV =
  /^(RELAY_API_KEY|RELAY_ADMIN_KEY|RELAY_KEY_PEPPER|RELAY_METRICS_TOKEN|SLACK_BOT_TOKEN|SLACK_SIGNING_SECRET|SLACK_APP_TOKEN)$/;

/** Where the thread file's path goes in `command`; without it the path is the last argument. */
export const THREAD_FILE_PLACEHOLDER = '{thread_file}';

function duration(fallback: string, min: number, max: number) {
  return durationSchema(
    {
      min,
      max,
      bareMs: true,
      message: (value) =>
        `must be a duration such as 500ms, 30s, 20m or 2h (from ${min} ms to ${max / 3_600_000} h), got "${value.slice(0, 40)}"`,
    },
    fallback,
  );
}

export const agentConfigSchema = z
  .object({
    /** The program and its arguments, as an array: spawned without a shell. */
    command: z
      .array(z.string().min(1, 'must not be empty').max(10_000))
      .min(1, 'must name the program to run, e.g. ["claude", "-p", "…"]')
      .max(100),
    /** A teammate's `repos_owned` path → the local folder the agent works in for handoffs about it. */
    repos: z.record(z.string().min(1).max(1_024), z.string().min(1).max(4_096)).default({}),
    /** The folder for a handoff that names none of `repos`; without it such a run fails saying so. */
    default_workdir: z.string().min(1).max(4_096).optional(),
    concurrency: z.number().int().min(1).max(16).default(1),
    time_limit: duration('30m', 1_000, 24 * 3_600_000),
    /** Names of environment variables passed on to the agent (values from the runner's own environment). */
    env: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
          .refine((name) => !SECRET_ENV.test(name), 'is a relay secret and never reaches the agent'),
      )
      .max(200)
      .default(DEFAULT_AGENT_ENV),
    /** Handoffs the runner accepts and runs by itself (off unless listed): each rule matches on all it names. */
    auto_run: z
      .array(
        z
          .object({ from: handleSchema.optional(), intent: intentSchema.optional() })
          .strict()
          .refine((r) => r.from !== undefined || r.intent !== undefined, 'must name from, intent or both'),
      )
      .max(50)
      .default([]),
    /** How the runner shows in Slack ("Running on @bob's agent (laptop)"). */
    runner_name: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[\w .@:()/-]+$/, 'must be letters, digits, spaces and . @ : ( ) / - _')
      .optional(),
    /** How long the agent gets after SIGTERM before SIGKILL, on a stop or the time limit. */
    kill_grace: duration('5s', 0, 600_000),
    /** Where thread files and reports are written (a fresh folder per run under it); the system temp folder by default. */
    state_dir: z.string().min(1).max(4_096).optional(),
  })
  .strict();

export type AgentConfig = z.infer<typeof agentConfigSchema>;

export class AgentConfigError extends Error {}

function expandHome(path: string, base: string): string {
  const expanded = path === '~' || path.startsWith('~/') ? `${homedir()}${path.slice(1)}` : path;
  return isAbsolute(expanded) ? expanded : resolve(base, expanded);
}

/** Reads and validates the config file; folders are made absolute (relative to the file's folder). */
export async function loadAgentConfig(file: string): Promise<AgentConfig> {
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (error) {
    throw new AgentConfigError(
      `${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let raw: unknown;
  try {
    raw = parseYaml(source);
  } catch (error) {
    throw new AgentConfigError(`${file}: not valid YAML or JSON (${(error as Error).message.split('\n')[0]})`);
  }
  return parseAgentConfig(raw, file);
}

export function parseAgentConfig(raw: unknown, file: string): AgentConfig {
  const parsed = agentConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field =
      issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('') ||
      '(top level)';
    throw new AgentConfigError(`${file}: ${field}: ${issue.message}`);
  }
  const base = resolve(file, '..');
  const config = parsed.data;
  return {
    ...config,
    repos: Object.fromEntries(Object.entries(config.repos).map(([repo, folder]) => [repo, expandHome(folder, base)])),
    ...(config.default_workdir ? { default_workdir: expandHome(config.default_workdir, base) } : {}),
    ...(config.state_dir ? { state_dir: expandHome(config.state_dir, base) } : {}),
  };
}
