// Which JSON-RPC failures are the relay's (5xx, so clients that retry on 5xx do) and which are the client's (200/401).
import { ERROR_CODES, RelayError, type ErrorSymbol } from '../../relay-core/domain/errors';
import { failureAnswer } from '../../relay-core/jsonrpc/failure-answer';

const RELAYS: Partial<Record<ErrorSymbol, [number, number | undefined]>> = {
  internal: [500, undefined],
  state_changed: [503, 1],
  unavailable: [503, 2],
};

test.each(Object.keys(ERROR_CODES) as ErrorSymbol[])('%s', (code) => {
  const answer = failureAnswer(new RelayError(code, 'x'));
  const [status, retryAfter] = RELAYS[code] ?? [code === 'unauthenticated' ? 401 : 200, undefined];
  expect({ status: answer.status, retryAfter: answer.retryAfterSeconds, code: answer.error.code }).toEqual({
    status,
    retryAfter,
    code,
  });
});

test.each([
  // Named as the driver names them (its constructors are internal); a real one is in integration/http-status.
  [
    'a MongoDB server selection timeout',
    Object.assign(new Error('Server selection timed out after 5000 ms'), { name: 'MongoServerSelectionError' }),
  ],
  ['a MongoDB network error', Object.assign(new Error('connection reset'), { name: 'MongoNetworkError' })],
  [
    'a refused socket wrapped as a cause',
    new Error('queue write failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    }),
  ],
])('%s is 503 unavailable with Retry-After, logged', (_name, error) => {
  expect(failureAnswer(error)).toMatchObject({
    status: 503,
    retryAfterSeconds: 2,
    unexpected: true,
    error: { code: 'unavailable' },
  });
});

test('any other unexpected error is 500 internal, logged, without its own message', () => {
  const answer = failureAnswer(new TypeError('secret detail'));
  expect(answer).toMatchObject({ status: 500, unexpected: true, error: { code: 'internal' } });
  expect(answer.error.message).not.toContain('secret detail');
});
