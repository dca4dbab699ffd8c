// `handoff-relay register` and `deliveries`, and the admin call that they, `invite`, `policy` and `approvals` make with
// RELAY_URL and the admin key (RELAY_ADMIN_KEY or the key file `npm start` wrote).
import { join } from 'node:path';
import { loadClientConfig } from '../relay-core/ops/config';
import { ADMIN_KEY_FILE, readSecret } from './local-secrets';
import { newTeammateText } from './new-teammate-text';
import { cardFromOptions } from './card-options';
import { UsageError, parseOptions, requireOptions } from './cli-help';
import { DELIVERIES_COMMAND, REGISTER_COMMAND } from './cli-commands';

export type AdminCall = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => Promise<any>;

export interface AdminCommandDeps {
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
}

export async function registerCommand(argv: string[], { env, out }: AdminCommandDeps): Promise<void> {
  const { values } = parseOptions(REGISTER_COMMAND.name, REGISTER_COMMAND.options, argv);
  requireOptions(REGISTER_COMMAND.name, values, ['handle', 'name', 'role']);
  const { client, adminKey } = await adminClient(env);
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
  out(newTeammateText(client.relayUrl, { handle: answer.handle!, api_key: answer.api_key }));
}

/** The relay URL and admin key the admin commands use (RELAY_URL, RELAY_ADMIN_KEY or the generated key file). */
async function adminClient(env: NodeJS.ProcessEnv) {
  const client = loadClientConfig(env);
  const adminKey = client.adminKey ?? (await readSecret(client.dataDir, ADMIN_KEY_FILE));
  if (!adminKey) {
    throw new UsageError(
      `RELAY_ADMIN_KEY is not set and ${join(client.dataDir, ADMIN_KEY_FILE)} does not exist (run \`npm start\` once, or set RELAY_ADMIN_KEY)`,
    );
  }
  return { client, adminKey };
}

/** One admin call with `env`'s relay URL and admin key; a refusal becomes a UsageError carrying the relay's message. */
export const adminCaller =
  (env: NodeJS.ProcessEnv): AdminCall =>
  async (method, path, body) => {
    const { client, adminKey } = await adminClient(env);
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
  };

interface DeliveryLine {
  id: string;
  event_type: string;
  thread_id: string;
  handle: string;
  status: string;
  attempts: Array<{ at: string; outcome: string; http_status: number | null; error: string | null }>;
}

export async function deliveriesCommand(
  argv: string[],
  adminCall: AdminCall,
  out: (text: string) => void,
): Promise<void> {
  const { values } = parseOptions(DELIVERIES_COMMAND.name, DELIVERIES_COMMAND.options, argv);
  const modes = [values.failed, values.redrive !== undefined, values['redrive-all']].filter(Boolean).length;
  if (modes !== 1) throw new UsageError('deliveries needs exactly one of --failed, --redrive ID, --redrive-all');
  if (values.redrive !== undefined) {
    const answer = (await adminCall(
      'POST',
      `/admin/deliveries/${encodeURIComponent(values.redrive)}/redrive`,
    )) as DeliveryLine;
    out(`Re-driving ${answer.id} (${answer.event_type} to ${answer.handle}).\n`);
    return;
  }
  if (values['redrive-all']) {
    const answer = (await adminCall('POST', '/admin/deliveries/redrive-all')) as { redriven: number };
    out(`Re-driving ${answer.redriven} failed deliveries.\n`);
    return;
  }
  const query = new URLSearchParams({ status: 'failed', ...(values.handle ? { handle: values.handle } : {}) });
  const { deliveries: failed } = (await adminCall('GET', `/admin/deliveries?${query}`)) as {
    deliveries: DeliveryLine[];
  };
  if (failed.length === 0) {
    out('No failed deliveries.\n');
    return;
  }
  for (const d of failed) {
    const last = d.attempts[d.attempts.length - 1];
    const why = last
      ? `${last.http_status ? `HTTP ${last.http_status}` : ''}${last.http_status && last.error ? ' ' : ''}${last.error ?? ''}`
      : '';
    out(
      `${d.id}  ${d.event_type}  to ${d.handle}  thread ${d.thread_id}  ${d.attempts.length} attempts  last: ${last?.at ?? '-'} ${why}\n`,
    );
  }
}
