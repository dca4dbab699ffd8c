// parseParams: a zod failure is invalid_params naming the field; a key the method takes one level down says where.
import { z } from 'zod';
import { parseParams } from '../../relay-core/jsonrpc/params';

// The shape of tasks/list's params (jsonrpc/wire-methods.ts).
const list = z
  .object({
    filter: z
      .object({ role: z.enum(['recipient', 'sender']).optional() })
      .strict()
      .default({}),
    page: z
      .object({ limit: z.number().int().default(20), cursor: z.string().nullish() })
      .strict()
      .default({ limit: 20 }),
  })
  .strict();

function refusal(value: unknown, at: PropertyKey[] = []): string {
  try {
    parseParams(list, value, at);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('parsed');
}

test('a key the method takes one level down (a page size beside page) is refused, saying where it goes', () => {
  expect(refusal({ limit: 5 })).toBe('params: Unrecognized key: "limit" (the method takes it as params.page.limit)');
  expect(refusal({ role: 'sender', cursor: 'x' })).toBe(
    'params: Unrecognized keys: "role", "cursor" (the method takes them as params.filter.role, params.page.cursor)',
  );
  expect(refusal({ limit: 5 }, ['task'])).toContain('(the method takes it as params.task.page.limit)');
});

test('a key the method takes inside its metadata (a question beside the message) says where it goes', () => {
  // The shape of a new thread's params (jsonrpc/wire-methods.ts): metadata is stored JSON that takes two keys.
  const send = z
    .object({
      intent: z.string(),
      metadata: z
        .record(z.string(), z.unknown())
        .default({})
        .pipe(z.record(z.string(), z.unknown()).and(z.object({ question: z.string().optional() }))),
    })
    .strict();
  expect(() => parseParams(send, { intent: 'ask_question', question: 'Why?' })).toThrow(
    'params: Unrecognized key: "question" (the method takes it as params.metadata.question)',
  );
});

test('a key the method takes nowhere, or an unknown key inside a part, is refused as before', () => {
  expect(refusal({ offset: 5 })).toBe('params: Unrecognized key: "offset"');
  expect(refusal({ page: { offset: 5 } })).toBe('params.page: Unrecognized key: "offset"');
  expect(parseParams(list, { page: { limit: 5 } })).toEqual({ filter: {}, page: { limit: 5 } });
});

test('several bad fields are named together, each once, first field first; the rest of them in the details', () => {
  expect(refusal({ filter: { role: 'owner' }, page: { limit: 'ten', cursor: 5 } })).toBe(
    'params.filter.role: Invalid option: expected one of "recipient"|"sender"; ' +
      'params.page.limit: Invalid input: expected number, received string; ' +
      'params.page.cursor: Invalid input: expected string, received number',
  );
  const many = z.object(Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`f${i}`, z.string()])));
  let message = '';
  try {
    parseParams(many, {});
  } catch (error) {
    message = (error as Error).message;
    expect((error as { details: { issues: unknown[] } }).details.issues).toHaveLength(7);
  }
  expect(message).toBe(
    'params.f0: Invalid input: expected string, received undefined; params.f1: Invalid input: expected string, ' +
      'received undefined; params.f2: Invalid input: expected string, received undefined; params.f3: Invalid input: ' +
      'expected string, received undefined; params.f4: Invalid input: expected string, received undefined; and 2 more',
  );
});
