// The MCP relay clients' one idempotency rule (mcp/relay-client.ts keyedCall): every change carries a fresh key in
// metadata and as the Idempotency-Key; a read carries none.
import { keyedCall } from '../../mcp/relay-client';

test('a change gets one fresh key, in metadata.client_idempotency_key and as the Idempotency-Key, beside the metadata it had', () => {
  const params = { task_id: null, metadata: { project: 'web' } };
  const first = keyedCall('message/send', params);
  expect(first.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  expect(first.params).toEqual({
    task_id: null,
    metadata: { project: 'web', client_idempotency_key: first.idempotencyKey },
  });
  expect(params.metadata).toEqual({ project: 'web' }); // the caller's object is not changed
  const again = keyedCall('tasks/update', { task_id: 't', transition: 'accept' });
  expect(again.params.metadata).toEqual({ client_idempotency_key: again.idempotencyKey });
  expect(again.idempotencyKey).not.toBe(first.idempotencyKey);
});

test('a read goes as it is, with no key', () => {
  const params = { role: 'recipient' };
  for (const method of ['tasks/list', 'tasks/get', 'agents/list']) {
    expect(keyedCall(method, params)).toEqual({ params });
  }
});
