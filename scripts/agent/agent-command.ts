// `handoff-relay agent [--config FILE]` and `handoff-relay agent stop RUN_ID`: the command line of the runner.
import { loadClientConfig } from '../../relay-core/ops/config';
import { parseOptions } from '../cli-help';
import { AGENT_COMMAND } from '../cli-commands';
import { AgentConfigError, loadAgentConfig } from './agent-config';
import { startAgentRunner, stopRun } from './agent-runner';

export interface AgentCommandDeps {
  env: NodeJS.ProcessEnv;
  say: (line: string) => void;
  fail: (message: string) => Error;
}

export async function agentCommand(argv: string[], { env, say, fail }: AgentCommandDeps): Promise<void> {
  // Options first: a mistyped one is named before any configuration is asked for.
  const { values, positionals } =
    argv[0] === 'stop'
      ? { values: {}, positionals: [] }
      : parseOptions(AGENT_COMMAND.name, AGENT_COMMAND.options, argv);
  if (positionals.length > 0) throw fail(`agent: unexpected "${positionals[0]}" (handoff-relay agent --help)`);
  const client = loadClientConfig(env);
  if (!client.apiKey) throw fail('RELAY_API_KEY: must be set to your API key (the runner acts as you)');
  const apiKey = client.apiKey;
  if (argv[0] === 'stop') {
    const runId = argv[1];
    if (!runId || argv.length > 2) throw fail('usage: handoff-relay agent stop RUN_ID');
    const run = await stopRun({ relayUrl: client.relayUrl, apiKey, runId, log: say });
    process.stdout.write(
      `Run ${runId}: ${run.status}${run.status === 'running' ? ' (stop asked; its runner ends the agent within a few seconds)' : ''}\n`,
    );
    return;
  }
  const file = values.config ?? 'handoff-agent.yaml';
  let config;
  try {
    config = await loadAgentConfig(file);
  } catch (error) {
    if (error instanceof AgentConfigError) throw fail(error.message);
    throw error;
  }
  const runner = startAgentRunner({ relayUrl: client.relayUrl, apiKey, config, env, log: say });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: ending running agents and finishing their runs…`);
    void runner.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  await runner.done;
}
