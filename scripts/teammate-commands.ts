// `handoff-relay rotate-key`, `audit` and `open`: a teammate's own key, history and web inbox, with its API key.
import { loadClientConfig } from '../relay-core/ops/config';
import type { AuditPage } from '../relay-core/service/audit-trail';
import { parseOptions } from './cli-help';
import { AUDIT_COMMAND, OPEN_COMMAND, ROTATE_KEY_COMMAND } from './cli-commands';

export interface TeammateCommandDeps {
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
  fail: (message: string) => Error;
}

/** One call as the teammate whose key RELAY_API_KEY holds; a refusal becomes `fail` with the relay's message. */
async function teammateCall(deps: TeammateCommandDeps, method: 'GET' | 'POST', path: string): Promise<any> {
  const client = loadClientConfig(deps.env);
  if (!client.apiKey) throw deps.fail('RELAY_API_KEY: must be set to your API key');
  let response: Response;
  try {
    response = await fetch(`${client.relayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${client.apiKey}` },
    });
  } catch (error) {
    throw deps.fail(
      `cannot reach the relay at ${client.relayUrl} (${(error as Error).message}); is it running? (RELAY_URL)`,
    );
  }
  const answer = (await response.json().catch(() => ({}))) as { message?: string };
  if (!response.ok) throw deps.fail(`the relay refused: ${answer.message ?? `HTTP ${response.status}`}`);
  return answer;
}

export async function rotateKeyCommand(argv: string[], deps: TeammateCommandDeps): Promise<void> {
  const { positionals } = parseOptions(ROTATE_KEY_COMMAND.name, ROTATE_KEY_COMMAND.options, argv);
  if (positionals.length > 0) throw deps.fail(`rotate-key takes no arguments (handoff-relay rotate-key --help)`);
  const answer = (await teammateCall(deps, 'POST', '/agents/me/keys/rotate')) as {
    agent_id: string;
    api_key: string;
    key_id: string;
  };
  deps.out(
    `Rotated the key of ${answer.agent_id} (new key id ${answer.key_id}); the old key is refused from now on.\n\n` +
      `New API key (shown once, store it now, and update RELAY_API_KEY and your MCP client config):\n  ${answer.api_key}\n`,
  );
}

export async function auditCommand(argv: string[], deps: TeammateCommandDeps): Promise<void> {
  const { values, positionals } = parseOptions(AUDIT_COMMAND.name, AUDIT_COMMAND.options, argv);
  if (positionals.length > 0) throw deps.fail(`audit: unexpected "${positionals[0]}" (handoff-relay audit --help)`);
  let cursor = values.cursor;
  let printed = 0;
  for (;;) {
    const query = new URLSearchParams({
      ...(values.limit ? { limit: values.limit } : {}),
      ...(cursor ? { cursor } : {}),
    });
    const page = (await teammateCall(deps, 'GET', `/agents/me/audit${query.size ? `?${query}` : ''}`)) as AuditPage;
    for (const e of page.events)
      deps.out(`${e.timestamp}  ${e.action}  by ${e.actor_handle} via ${e.via}  ${e.resource_type} ${e.resource_id}\n`);
    printed += page.events.length;
    cursor = page.next_cursor ?? undefined;
    if (!values.all || !cursor) break;
  }
  if (printed === 0) deps.out('No events.\n');
  if (cursor && !values.all)
    deps.out(`More: handoff-relay audit --cursor ${cursor}${values.limit ? ` --limit ${values.limit}` : ''}\n`);
}

export async function openCommand(argv: string[], deps: TeammateCommandDeps): Promise<void> {
  const { positionals } = parseOptions(OPEN_COMMAND.name, OPEN_COMMAND.options, argv);
  if (positionals.length > 0) throw deps.fail(`open takes no arguments (handoff-relay open --help)`);
  const answer = (await teammateCall(deps, 'POST', '/agents/me/web-link')) as { url: string; expires_at: string };
  deps.out(
    `Open this link in your browser to sign in to your web inbox (it works once, until ${answer.expires_at}):\n  ${answer.url}\n`,
  );
}
