// The MCP tools' RelayClient port, one contract for both implementations: over HTTP (the stdio server's) and
// in-process (the /mcp mount's). Each case runs against each, on one real relay.
import { ERROR_CODES } from '../../relay-core/domain/errors';
import { InProcessRelayClient } from '../../mcp/in-process-relay-client';
import { HttpRelayClient, RelayCallError, type RelayClient } from '../../mcp/relay-client';
import { text } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
const clients: Record<string, RelayClient> = {};
let http: HttpRelayClient;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'relay_client' });
  const key = await relay.register({ handle: 'agent@acme' });
  await relay.register({ handle: 'peer@acme' });
  http = new HttpRelayClient({ relayUrl: relay.url, apiKey: key, retry: { retries: 0 } });
  clients.http = http;
  clients['in-process'] = new InProcessRelayClient({
    uses: relay.relay,
    caller: (await relay.relay.teammates.get('agent@acme'))!,
  });
});

afterAll(async () => {
  http?.close();
  await relay?.stop();
});

const send = (client: RelayClient, summary: string) =>
  client.call<{ task_id: string }>('message/send', {
    recipient: 'peer@acme',
    intent: 'inform',
    message: text(summary),
  });

async function refusal(promise: Promise<unknown>): Promise<RelayCallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RelayCallError);
  return error as RelayCallError;
}

describe.each(['http', 'in-process'])('%s RelayClient', (name) => {
  const client = () => clients[name]!;

  test('a call returns the method result, and the thread records the mcp surface', async () => {
    const { task_id } = await send(client(), `contract ${name}`);
    const task = await client().call<{ thread_id: string; status: string }>('tasks/get', { task_id });
    expect(task).toMatchObject({ thread_id: task_id, status: 'pending' });
    expect((await relay.store.threads.findOne({ _id: task_id }))?.status_history[0]?.via).toBe('mcp');
  });

  test('a change goes under an idempotency key of its own, a read under none', async () => {
    const [a, b] = [await send(client(), `twice ${name}`), await send(client(), `twice ${name}`)];
    expect(b.task_id).not.toBe(a.task_id);
    const keysBefore = await relay.store.idempotency.countDocuments({});
    await client().call('tasks/get', { task_id: a.task_id });
    expect(await relay.store.idempotency.countDocuments({})).toBe(keysBefore);
    await client().call('message/send', { task_id: a.task_id, message: text('one more note') });
    expect(await relay.store.idempotency.countDocuments({})).toBe(keysBefore + 1);
  });

  test("a relay refusal is a RelayCallError with the relay's code, number and message", async () => {
    const error = await refusal(
      client().call('message/send', { recipient: 'nobody@acme', intent: 'inform', message: text('x') }),
    );
    expect(error).toMatchObject({ code: 'recipient_not_found', numericCode: ERROR_CODES.recipient_not_found });
    expect(error.message).toMatch(/^recipient_not_found \(-32004\): .*nobody@acme/);
  });

  test('bad params are invalid_params naming the field; nothing is stored', async () => {
    const before = await relay.store.threads.countDocuments({});
    const error = await refusal(
      client().call('message/send', { recipient: 'peer@acme', intent: 'no-such-intent', message: text('x') }),
    );
    expect(error).toMatchObject({ code: 'invalid_params', numericCode: ERROR_CODES.invalid_params });
    expect(error.message).toContain('intent');
    expect(await relay.store.threads.countDocuments({})).toBe(before);
  });

  test('an unknown method is method_not_found', async () => {
    const error = await refusal(client().call('tasks/teleport', {}));
    expect(error).toMatchObject({ code: 'method_not_found', numericCode: ERROR_CODES.method_not_found });
  });
});
