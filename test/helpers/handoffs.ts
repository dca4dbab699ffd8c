// Handoffs sent as an agent sends them (`message/send` over /a2a), for tests that need a thread to act on.
import type { TestRelay } from './relay-harness';

/** A JSON-RPC message of one text part. */
export const text = (t: string) => ({ role: 'user', parts: [{ type: 'text', text: t }] });

/** Sends a handoff (intent inform unless `extra` says otherwise) and returns its thread id; throws with the relay's answer when refused. */
export async function sendHandoff(
  relay: Pick<TestRelay, 'rpc'>,
  key: string,
  to: string,
  summary = 'work',
  extra: Record<string, unknown> = {},
): Promise<string> {
  const { body } = await relay.rpc(key, 'message/send', {
    recipient: to,
    intent: 'inform',
    message: text(summary),
    ...extra,
  });
  if (!body.result) throw new Error(`message/send to ${to} failed: ${JSON.stringify(body.error ?? body)}`);
  return body.result.task_id as string;
}
