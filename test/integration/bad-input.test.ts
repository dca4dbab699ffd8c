// Malformed requests against every JSON-RPC method and REST route of one real relay (FerretDB + Redis).
// Each row: no 5xx, the expected status and error symbol (and field path for invalid_params), and the
// database exactly as it was before the row. Requests the README says must be accepted are at the end.
import { createHash } from 'node:crypto';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { text } from '../helpers/handoffs';
import { THREAD_STATUSES } from '../../relay-core/domain/schemas';

// ── the wire's error table (the README's), written out here so the test does not trust the product's copy ──
const RPC_CODES = {
  parse_error: -32700,
  invalid_request: -32600,
  method_not_found: -32601,
  invalid_params: -32602,
  unauthenticated: -32001,
  recipient_not_found: -32004,
  not_a_participant: -32005,
  thread_not_found: -32006,
  thread_terminal: -32007,
  invalid_transition: -32008,
  not_authorized_transition: -32009,
  duplicate_idempotency_key: -32011,
  invalid_intent_payload: -32012,
  teammate_blocked: -32013,
  conflict: -32014,
} as const;
type Code = keyof typeof RPC_CODES;
const REST_STATUS: Partial<Record<Code, number>> = {
  parse_error: 400,
  invalid_request: 400,
  invalid_params: 400,
  unauthenticated: 401,
  method_not_found: 404,
  recipient_not_found: 404,
  conflict: 409,
};

// ── requests ──
type Who = 'alice' | 'bob' | 'carol' | 'admin' | 'none' | { authorization: string };
interface Req {
  method: string;
  path: string;
  as: Who;
  json?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}
interface Row {
  name: string;
  req: Req;
  status: number;
  code: Code;
  /** For invalid_params and conflict: what the message must start with (a field path). */
  field?: string;
}

/** Placeholders filled once the fixtures exist: a pending thread alice→bob, a cancelled one, an unknown id. */
const T1 = '<T1>';
const T2 = '<T2>';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const a2a = (json: unknown, as: Who = 'alice', headers?: Record<string, string>): Req => ({
  method: 'POST',
  path: '/a2a',
  as,
  json,
  headers,
});
const a2aRaw = (raw: string, headers?: Record<string, string>): Req => ({
  method: 'POST',
  path: '/a2a',
  as: 'alice',
  raw,
  headers,
});
const rpc = (method: string, params: unknown, as: Who = 'alice', headers?: Record<string, string>) =>
  a2a({ jsonrpc: '2.0', id: 7, method, params }, as, headers);
const rest = (method: string, path: string, json?: unknown, as: Who = 'alice'): Req => ({ method, path, as, json });

const NEW = { task_id: null, recipient: 'bob@acme', intent: 'inform', message: text('Please look at the search API') };
const PA = { description: 'Rename the prop', target_files: ['apps/web/a.tsx'], rationale: 'Consistency' };
const send = (over: Record<string, unknown>, as: Who = 'alice', headers?: Record<string, string>) =>
  rpc('message/send', { ...NEW, ...over }, as, headers);
const art = (artifact: unknown) => send({ artifacts: [artifact] });
const propose = (over: Record<string, unknown>) =>
  send({ intent: 'propose_action', proposed_action: { ...PA, ...over } });
const append = (over: Record<string, unknown>, as: Who = 'alice') =>
  rpc('message/send', { task_id: T1, message: text('one more thing'), ...over }, as);
const update = (over: Record<string, unknown>, as: Who = 'bob') =>
  rpc('tasks/update', { task_id: T1, transition: 'accept', ...over }, as);
const cancel = (over: Record<string, unknown>, as: Who = 'alice') => rpc('tasks/cancel', { task_id: T1, ...over }, as);
const list = (filter: unknown, page?: unknown) => rpc('tasks/list', page === undefined ? { filter } : { filter, page });
const cursor = (value: unknown) =>
  rpc('tasks/list', { page: { cursor: Buffer.from(JSON.stringify(value)).toString('base64url') } });
const card = (over: Record<string, unknown>) =>
  rest('POST', '/admin/agents', { handle: 'zed@acme', name: 'Zed', role: 'qa', ...over }, 'admin');
const putCard = (json: unknown, as: Who = 'alice') => rest('PUT', '/agents/me/card', json, as);
const enc = encodeURIComponent;

// ── rows ──
const isA2a = (req: Req) => req.path === '/a2a' && req.method === 'POST';
/** invalid_params naming `field`. */
const P = (name: string, req: Req, field: string): Row => ({
  name,
  req,
  field,
  code: 'invalid_params',
  status: isA2a(req) ? 200 : 400,
});
/** Any other error; JSON-RPC answers 200 except authentication (401), REST the symbol's status. */
const E = (name: string, req: Req, code: Code, status?: number): Row => ({
  name,
  req,
  code,
  status:
    status ??
    (isA2a(req) ? (code === 'unauthenticated' ? 401 : code === 'parse_error' ? 400 : 200) : REST_STATUS[code]!),
});

const long = (n: number, ch = 'x') => ch.repeat(n);
/** `n` extra fields for an artifact. */
const extras = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`extra_${i}`, i]));
/** A request whose JSON has a literal `__proto__` key where the placeholder key "<PROTO>" is (an object literal cannot hold one). */
const raw = (req: Req): Req => ({
  ...req,
  json: undefined,
  raw: JSON.stringify(req.json).replaceAll('"<PROTO>"', '"__proto__"'),
});
const longHandle = `${long(124, 'a')}@acme`; // 129 characters, all allowed
const nested = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown;
const deepRaw = (depth: number) =>
  `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"recipient":"bob@acme","intent":"inform","message":{"parts":[{"text":"x"}]},"metadata":{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
const overMiB = long(1_100_000);

const ENVELOPE: Row[] = [
  E('envelope: not JSON at all', a2aRaw('this is not json'), 'parse_error'),
  E('envelope: truncated JSON', a2aRaw('{"jsonrpc":'), 'parse_error'),
  E('envelope: empty body', a2aRaw(''), 'parse_error'),
  E(
    'envelope: form-encoded body',
    a2aRaw('jsonrpc=2.0&method=tasks/list', { 'content-type': 'application/x-www-form-urlencoded' }),
    'invalid_request',
    415,
  ),
  E(
    'envelope: a JSON body sent as text/plain',
    a2aRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: NEW }), {
      'content-type': 'text/plain',
    }),
    'invalid_request',
    415,
  ),
  E(
    'envelope: a JSON body sent as text/plain; charset=utf-8',
    a2aRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }), {
      'content-type': 'text/plain; charset=utf-8',
    }),
    'invalid_request',
    415,
  ),
  E(
    'envelope: a JSON body sent as application/jsonp',
    a2aRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }), {
      'content-type': 'application/jsonp',
    }),
    'invalid_request',
    415,
  ),
  E(
    'envelope: a JSON body sent as application/json-patch+json',
    a2aRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }), {
      'content-type': 'application/json-patch+json',
    }),
    'invalid_request',
    415,
  ),
  E(
    'envelope: text/plain without a key (415 before authentication)',
    { ...a2aRaw('{}', { 'content-type': 'text/plain' }), as: 'none' },
    'invalid_request',
    415,
  ),
  E(
    'envelope: gzip header on a body that is not gzip',
    a2aRaw('{"jsonrpc":"2.0"}', { 'content-encoding': 'gzip' }),
    'parse_error',
  ),
  E(
    'envelope: unsupported content-encoding (zstd)',
    a2aRaw('{}', { 'content-encoding': 'zstd' }),
    'invalid_request',
    415,
  ),
  E('envelope: JSON array []', a2a([]), 'invalid_request'),
  E(
    'envelope: batch of one valid call',
    a2a([{ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }]),
    'invalid_request',
  ),
  E('envelope: JSON string', a2a('tasks/list'), 'invalid_request'),
  E('envelope: JSON number', a2a(42), 'invalid_request'),
  E('envelope: JSON null', a2a(null), 'invalid_request'),
  E('envelope: JSON true', a2a(true), 'invalid_request'),
  E('envelope: jsonrpc "1.0"', a2a({ jsonrpc: '1.0', id: 1, method: 'tasks/list' }), 'invalid_request'),
  E('envelope: jsonrpc missing', a2a({ id: 1, method: 'tasks/list' }), 'invalid_request'),
  E('envelope: jsonrpc as number 2', a2a({ jsonrpc: 2, id: 1, method: 'tasks/list' }), 'invalid_request'),
  E('envelope: method missing', a2a({ jsonrpc: '2.0', id: 1, params: {} }), 'invalid_request'),
  E('envelope: method is a number', a2a({ jsonrpc: '2.0', id: 1, method: 42 }), 'invalid_request'),
  E('envelope: method is null', a2a({ jsonrpc: '2.0', id: 1, method: null }), 'invalid_request'),
  E('envelope: method is an array', a2a({ jsonrpc: '2.0', id: 1, method: ['tasks/list'] }), 'invalid_request'),
  E('envelope: unknown method', rpc('tasks/explode', {}), 'method_not_found'),
  E('envelope: method "__proto__"', rpc('__proto__', {}), 'method_not_found'),
  E('envelope: method "constructor"', rpc('constructor', {}), 'method_not_found'),
  E('envelope: method "hasOwnProperty"', rpc('hasOwnProperty', {}), 'method_not_found'),
  E('envelope: empty method', rpc('', {}), 'method_not_found'),
  E('envelope: method in the wrong case (Tasks/Get)', rpc('Tasks/Get', { task_id: T1 }), 'method_not_found'),
  P('envelope: params as array', rpc('tasks/get', [T1]), 'params'),
  P('envelope: params as string', rpc('tasks/list', 'all'), 'params'),
  P('envelope: params null', rpc('tasks/list', null), 'params'),
  P('envelope: params a number', rpc('tasks/list', 1), 'params'),
  E(
    'envelope: id as object',
    a2a({ jsonrpc: '2.0', id: { a: 1 }, method: 'tasks/list', params: {} }),
    'invalid_request',
  ),
  E('envelope: id as array', a2a({ jsonrpc: '2.0', id: [1], method: 'tasks/list', params: {} }), 'invalid_request'),
  E('envelope: id as boolean', a2a({ jsonrpc: '2.0', id: true, method: 'tasks/list', params: {} }), 'invalid_request'),
  E('envelope: body over 1 MiB', send({ message: text(overMiB) }), 'invalid_request', 413),
  E('auth: no Authorization header', send({}, 'none'), 'unauthenticated'),
  E(
    'auth: a well-formed but unknown key',
    send({}, { authorization: 'Bearer hr_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }),
    'unauthenticated',
  ),
  E('auth: a garbage key', send({}, { authorization: 'Bearer not-a-key' }), 'unauthenticated'),
  E('auth: the admin key on /a2a', send({}, 'admin'), 'unauthenticated'),
  E('auth: Basic instead of Bearer', send({}, { authorization: 'Basic YWxpY2U6cGFzcw==' }), 'unauthenticated'),
  E('auth: "Bearer" with no key', send({}, { authorization: 'Bearer ' }), 'unauthenticated'),
  E('auth: comes before envelope checks (no key, params array)', rpc('tasks/get', [1], 'none'), 'unauthenticated'),
];

const SEND_NEW: Row[] = [
  P('message/send: no params at all', a2a({ jsonrpc: '2.0', id: 7, method: 'message/send' }), 'params.recipient'),
  P('message/send: missing recipient', send({ recipient: undefined }), 'params.recipient'),
  P('message/send: missing intent', send({ intent: undefined }), 'params.intent'),
  P('message/send: missing message', send({ message: undefined }), 'params.message'),
  P('message/send: message is a string', send({ message: 'hello' }), 'params.message'),
  P('message/send: message without parts', send({ message: { role: 'user' } }), 'params.message.parts'),
  P('message/send: empty parts', send({ message: { role: 'user', parts: [] } }), 'params.message.parts'),
  P(
    'message/send: parts is an object',
    send({ message: { role: 'user', parts: { text: 'x' } } }),
    'params.message.parts',
  ),
  P(
    'message/send: part without text',
    send({ message: { parts: [{ type: 'text' }] } }),
    'params.message.parts[0].text',
  ),
  P(
    'message/send: part text is a number',
    send({ message: { parts: [{ type: 'text', text: 42 }] } }),
    'params.message.parts[0].text',
  ),
  P(
    'message/send: part type "image"',
    send({ message: { parts: [{ type: 'image', text: 'x' }] } }),
    'params.message.parts[0].type',
  ),
  P(
    'message/send: part kind "file"',
    send({ message: { parts: [{ kind: 'file', text: 'x' }] } }),
    'params.message.parts[0].kind',
  ),
  P(
    'message/send: 21 parts',
    send({ message: { parts: Array.from({ length: 21 }, () => ({ type: 'text', text: 'x' })) } }),
    'params.message.parts',
  ),
  P(
    'message/send: message.role is a number',
    send({ message: { role: 1, parts: [{ type: 'text', text: 'x' }] } }),
    'params.message.role',
  ),
  P('message/send: empty summary', send({ message: text('') }), 'params.message.parts'),
  P('message/send: whitespace-only summary', send({ message: text(' \n\t ') }), 'params.message.parts'),
  P('message/send: summary of 8001 characters', send({ message: text(long(8_001)) }), 'params.message.parts'),
  P(
    'message/send: two parts joining past 8000 characters',
    send({
      message: {
        parts: [
          { type: 'text', text: long(4_001) },
          { type: 'text', text: long(4_001) },
        ],
      },
    }),
    'params.message.parts',
  ),
  P(
    'message/send: summary with a lone surrogate \\ud800 (not well-formed Unicode)',
    send({ message: text('broken \ud800 text') }),
    'params.message.parts',
  ),
  P('message/send: recipient is a number', send({ recipient: 42 }), 'params.recipient'),
  P('message/send: recipient is empty', send({ recipient: '' }), 'params.recipient'),
  P('message/send: recipient is an object', send({ recipient: { handle: 'bob@acme' } }), 'params.recipient'),
  P('message/send: recipient is an array', send({ recipient: ['bob@acme'] }), 'params.recipient'),
  P('message/send: recipient without @', send({ recipient: 'bob' }), 'params.recipient'),
  P('message/send: recipient with a space', send({ recipient: 'bob @acme' }), 'params.recipient'),
  P('message/send: recipient with two @ (bob@acme@acme)', send({ recipient: 'bob@acme@acme' }), 'params.recipient'),
  P('message/send: recipient with @@', send({ recipient: 'bob@@acme' }), 'params.recipient'),
  P(
    'message/send: recipient with a Cyrillic е (bob@acm\\u0435)',
    send({ recipient: 'bob@acm\u0435' }),
    'params.recipient',
  ),
  P(
    'message/send: recipient with a Cyrillic о (b\\u043eb@acme)',
    send({ recipient: 'b\u043eb@acme' }),
    'params.recipient',
  ),
  P('message/send: recipient of 129 characters', send({ recipient: longHandle }), 'params.recipient'),
  P('message/send: recipient with a zero-width joiner', send({ recipient: 'bob\u200d@acme' }), 'params.recipient'),
  P('message/send: recipient with a zero-width space', send({ recipient: 'bob@acme\u200b' }), 'params.recipient'),
  P('message/send: recipient with an RTL override', send({ recipient: '\u202ebob@acme' }), 'params.recipient'),
  P('message/send: recipient with a NUL byte', send({ recipient: 'bob\u0000@acme' }), 'params.recipient'),
  P('message/send: recipient with a trailing newline', send({ recipient: 'bob@acme\n' }), 'params.recipient'),
  P('message/send: recipient with a lone surrogate', send({ recipient: 'bob\ud800@acme' }), 'params.recipient'),
  P('message/send: recipient with an empty local part', send({ recipient: '@acme' }), 'params.recipient'),
  P('message/send: recipient with an empty team', send({ recipient: 'bob@' }), 'params.recipient'),
  P('message/send: recipient made of emoji', send({ recipient: '\u{1F469}\u200d\u{1F4BB}@acme' }), 'params.recipient'),
  P('message/send: unknown intent', send({ intent: 'order' }), 'params.intent'),
  P('message/send: intent in capitals', send({ intent: 'INFORM' }), 'params.intent'),
  P('message/send: intent is a number', send({ intent: 1 }), 'params.intent'),
  P('message/send: intent is empty', send({ intent: '' }), 'params.intent'),
  P('message/send: intent is null', send({ intent: null }), 'params.intent'),
  P('message/send: task_id empty string (not null)', send({ task_id: '' }), 'params.task_id'),
  P('message/send: task_id an object', send({ task_id: {} }), 'params.task_id'),
  P('message/send: task_id 0', send({ task_id: 0 }), 'params.task_id'),
  P(
    'message/send: artifacts is an object',
    send({ artifacts: { type: 'link', url: 'https://e.com' } }),
    'params.artifacts',
  ),
  P('message/send: artifacts is a string', send({ artifacts: 'none' }), 'params.artifacts'),
  P('message/send: artifacts is null', send({ artifacts: null }), 'params.artifacts'),
  P('artifact: null', art(null), 'params.artifacts[0]'),
  P('artifact: a string', art('https://e.com'), 'params.artifacts[0]'),
  P(
    'artifact: an unknown type whose name is not lower-case (Binary Data)',
    art({ type: 'Binary Data', data: 'AAAA' }),
    'params.artifacts[0].type',
  ),
  P('artifact: an unknown type with 17 fields', art({ type: 'binary', ...extras(17) }), 'params.artifacts[0]'),
  P(
    'artifact: an unknown type whose fields pass 16 KiB',
    art({ type: 'binary', data: long(16_400) }),
    'params.artifacts[0]',
  ),
  P(
    'artifact: an unknown type with a NUL in a field',
    art({ type: 'binary', data: 'a\u0000b' }),
    'params.artifacts[0].data',
  ),
  P('artifact: no type', art({ path: 'a.ts', diff: '+x' }), 'params.artifacts[0]'),
  P('artifact: type in capitals (LINK)', art({ type: 'LINK', url: 'https://e.com' }), 'params.artifacts[0]'),
  P('artifact file_diff: missing path', art({ type: 'file_diff', diff: '+x' }), 'params.artifacts[0].path'),
  P('artifact file_diff: missing diff', art({ type: 'file_diff', path: 'a.ts' }), 'params.artifacts[0].diff'),
  P(
    'artifact file_diff: path is a number',
    art({ type: 'file_diff', path: 7, diff: '+x' }),
    'params.artifacts[0].path',
  ),
  P('artifact file_diff: empty diff', art({ type: 'file_diff', path: 'a.ts', diff: '' }), 'params.artifacts[0].diff'),
  P(
    'artifact file_diff: 17 extra fields',
    art({ type: 'file_diff', path: 'a.ts', diff: '+x', ...extras(17) }),
    'params.artifacts[0]',
  ),
  P(
    'artifact file_diff: a NUL in the diff',
    art({ type: 'file_diff', path: 'a.ts', diff: '+x\u0000' }),
    'params.artifacts[0].diff',
  ),
  P(
    'artifact file_diff: a NUL in the path',
    art({ type: 'file_diff', path: 'a\u0000.ts', diff: '+x' }),
    'params.artifacts[0].path',
  ),
  P(
    'artifact file_diff: diff of 100001 characters',
    art({ type: 'file_diff', path: 'a.ts', diff: long(100_001) }),
    'params.artifacts[0].diff',
  ),
  P(
    'artifact file_diff: path of 1025 characters',
    art({ type: 'file_diff', path: long(1_025), diff: '+x' }),
    'params.artifacts[0].path',
  ),
  P('artifact file_ref: missing path', art({ type: 'file_ref', lines: '1-2' }), 'params.artifacts[0].path'),
  P(
    'artifact file_ref: git_sha is a number',
    art({ type: 'file_ref', path: 'a.ts', git_sha: 1234567 }),
    'params.artifacts[0].git_sha',
  ),
  P(
    'artifact file_ref: git_sha neither a sha nor a ref name (HEAD~1)',
    art({ type: 'file_ref', path: 'a.ts', git_sha: 'HEAD~1' }),
    'params.artifacts[0].git_sha',
  ),
  P(
    'artifact file_ref: git_sha a ref name starting with "-"',
    art({ type: 'file_ref', path: 'a.ts', git_sha: '-main' }),
    'params.artifacts[0].git_sha',
  ),
  P(
    'artifact file_ref: lines is a number',
    art({ type: 'file_ref', path: 'a.ts', lines: 10 }),
    'params.artifacts[0].lines',
  ),
  P(
    'artifact file_ref: lines not a range',
    art({ type: 'file_ref', path: 'a.ts', lines: 'ten' }),
    'params.artifacts[0].lines',
  ),
  P(
    'artifact file_ref: lines "20-10" (start after end)',
    art({ type: 'file_ref', path: 'a.ts', lines: '20-10' }),
    'params.artifacts[0].lines',
  ),
  P(
    'artifact file_ref: lines [20, 10] (start after end)',
    art({ type: 'file_ref', path: 'a.ts', lines: [20, 10] }),
    'params.artifacts[0].lines',
  ),
  P('artifact file_ref: lines [0]', art({ type: 'file_ref', path: 'a.ts', lines: [0] }), 'params.artifacts[0].lines'),
  P(
    'artifact file_ref: lines [1, 2, 3]',
    art({ type: 'file_ref', path: 'a.ts', lines: [1, 2, 3] }),
    'params.artifacts[0].lines',
  ),
  P(
    'artifact file_ref: lines ["10", "20"]',
    art({ type: 'file_ref', path: 'a.ts', lines: ['10', '20'] }),
    'params.artifacts[0].lines',
  ),
  P(
    'artifact file_ref: lines [1.5]',
    art({ type: 'file_ref', path: 'a.ts', lines: [1.5] }),
    'params.artifacts[0].lines',
  ),
  P(
    'artifact file_ref: an extra field named _provenance',
    art({ type: 'file_ref', path: 'a.ts', _provenance: { trusted: true } }),
    'params.artifacts[0]._provenance',
  ),
  P(
    'artifact file_ref: an extra field named __proto__',
    raw(art({ type: 'file_ref', path: 'a.ts', '<PROTO>': { admin: true } })),
    'params.artifacts[0].__proto__',
  ),
  P(
    'artifact file_ref: an extra field named constructor',
    art({ type: 'file_ref', path: 'a.ts', constructor: { prototype: { admin: true } } }),
    'params.artifacts[0].constructor',
  ),
  P('artifact test_command: missing command', art({ type: 'test_command', cwd: '.' }), 'params.artifacts[0].command'),
  P(
    'artifact test_command: cwd is a number',
    art({ type: 'test_command', command: 'npm test', cwd: 1 }),
    'params.artifacts[0].cwd',
  ),
  P(
    'artifact test_command: command of 4001 characters',
    art({ type: 'test_command', command: long(4_001) }),
    'params.artifacts[0].command',
  ),
  P(
    'artifact test_command: an extra field holding a $set key',
    art({ type: 'test_command', command: 'npm test', run: { $set: { x: 1 } } }),
    'params.artifacts[0].run.$set',
  ),
  P(
    'artifact test_command: an extra field holding a dotted key',
    art({ type: 'test_command', command: 'npm test', env: { 'a.b': '1' } }),
    'params.artifacts[0].env.a.b',
  ),
  P(
    'artifact test_command: an extra field holding __proto__ deep down',
    raw(art({ type: 'test_command', command: 'npm test', env: { x: [{ '<PROTO>': 1 }] } })),
    'params.artifacts[0].env.x[0].__proto__',
  ),
  P(
    'artifact test_command: an extra field with a key of 101 characters',
    art({ type: 'test_command', command: 'npm test', [long(101, 'k')]: 1 }),
    'params.artifacts[0]',
  ),
  P('artifact api_contract: neither schema_url nor inline', art({ type: 'api_contract' }), 'params.artifacts[0]'),
  P(
    'artifact api_contract: ftp schema_url',
    art({ type: 'api_contract', schema_url: 'ftp://x/openapi.yaml' }),
    'params.artifacts[0].schema_url',
  ),
  P(
    'artifact api_contract: inline null and no schema_url',
    art({ type: 'api_contract', inline: null }),
    'params.artifacts[0]',
  ),
  P(
    'artifact api_contract: inline JSON past 50000 characters',
    art({ type: 'api_contract', inline: { paths: long(50_001) } }),
    'params.artifacts[0].inline',
  ),
  P(
    'artifact api_contract: inline JSON with a $ref key',
    art({ type: 'api_contract', inline: { $ref: '#/x' } }),
    'params.artifacts[0].inline.$ref',
  ),
  P(
    'artifact api_contract: inline JSON with a prototype key',
    art({ type: 'api_contract', inline: { paths: { prototype: {} } } }),
    'params.artifacts[0].inline.paths.prototype',
  ),
  P(
    'artifact api_contract: inline of 50001 characters',
    art({ type: 'api_contract', inline: long(50_001) }),
    'params.artifacts[0].inline',
  ),
  P('artifact link: missing url', art({ type: 'link', title: 'PR' }), 'params.artifacts[0].url'),
  P(
    'artifact link: title is a number',
    art({ type: 'link', url: 'https://e.com', title: 5 }),
    'params.artifacts[0].title',
  ),
  P(
    'artifact link: title of 501 characters',
    art({ type: 'link', url: 'https://e.com', title: long(501) }),
    'params.artifacts[0].title',
  ),
  P('artifact link: javascript: url', art({ type: 'link', url: 'javascript:alert(1)' }), 'params.artifacts[0].url'),
  P(
    'artifact link: JAVASCRIPT: url in capitals',
    art({ type: 'link', url: 'JAVASCRIPT:alert(1)' }),
    'params.artifacts[0].url',
  ),
  P('artifact link: file: url', art({ type: 'link', url: 'file:///etc/passwd' }), 'params.artifacts[0].url'),
  P('artifact link: ftp: url', art({ type: 'link', url: 'ftp://x' }), 'params.artifacts[0].url'),
  P(
    'artifact link: data: url',
    art({ type: 'link', url: 'data:text/html,<script>alert(1)</script>' }),
    'params.artifacts[0].url',
  ),
  P(
    'artifact link: url of 2049 characters',
    art({ type: 'link', url: `https://e.com/${long(2_035)}` }),
    'params.artifacts[0].url',
  ),
  P(
    'artifact link: extra fields past 16 KiB together',
    art({ type: 'link', url: 'https://e.com', a: long(9_000), b: long(9_000) }),
    'params.artifacts[0]',
  ),
  P(
    'artifact link: a NUL in the title',
    art({ type: 'link', url: 'https://e.com', title: 'PR\u0000' }),
    'params.artifacts[0].title',
  ),
  P(
    'artifacts: 51 of them',
    send({ artifacts: Array.from({ length: 51 }, () => ({ type: 'link', url: 'https://e.com' })) }),
    'params.artifacts',
  ),
  P(
    'artifacts: the second one is bad',
    send({ artifacts: [{ type: 'link', url: 'https://e.com' }, { type: 'file_ref' }] }),
    'params.artifacts[1].path',
  ),
  E('intent: propose_action without proposed_action', send({ intent: 'propose_action' }), 'invalid_intent_payload'),
  E('intent: proposed_action on inform', send({ proposed_action: PA }), 'invalid_intent_payload'),
  E('intent: a question on inform', send({ metadata: { question: 'why?' } }), 'invalid_intent_payload'),
  P(
    'proposed_action: a string',
    send({ intent: 'propose_action', proposed_action: 'rename it' }),
    'params.proposed_action',
  ),
  P('proposed_action: missing description', propose({ description: undefined }), 'params.proposed_action.description'),
  P('proposed_action: missing rationale', propose({ rationale: undefined }), 'params.proposed_action.rationale'),
  P('proposed_action: target_files a string', propose({ target_files: 'a.ts' }), 'params.proposed_action.target_files'),
  P(
    'proposed_action: target_files holds a number',
    propose({ target_files: [1] }),
    'params.proposed_action.target_files[0]',
  ),
  P(
    'proposed_action: 101 target_files',
    propose({ target_files: Array.from({ length: 101 }, (_, i) => `f${i}.ts`) }),
    'params.proposed_action.target_files',
  ),
  P(
    'proposed_action: description of 4001 characters',
    propose({ description: long(4_001) }),
    'params.proposed_action.description',
  ),
  P(
    'proposed_action: suggested_diff of 100001 characters',
    propose({ suggested_diff: long(100_001) }),
    'params.proposed_action.suggested_diff',
  ),
  P('proposed_action: extra field', propose({ auto_apply: true }), 'params.proposed_action'),
  P(
    'metadata: question of 4001 characters',
    send({ intent: 'ask_question', metadata: { question: long(4_001) } }),
    'params.metadata.question',
  ),
  P(
    'metadata: empty question',
    send({ intent: 'ask_question', metadata: { question: '' } }),
    'params.metadata.question',
  ),
  P(
    'metadata: question is a number',
    send({ intent: 'ask_question', metadata: { question: 42 } }),
    'params.metadata.question',
  ),
  P('metadata: an array', send({ metadata: ['a'] }), 'params.metadata'),
  P('metadata: a string', send({ metadata: 'x' }), 'params.metadata'),
  P('metadata: null', send({ metadata: null }), 'params.metadata'),
  P('metadata: over 16 KiB', send({ metadata: { blob: long(16_400) } }), 'params.metadata'),
  P('metadata: a key of 101 characters', send({ metadata: { [long(101, 'k')]: 1 } }), 'params.metadata'),
  P(
    'metadata: client_idempotency_key a number',
    send({ metadata: { client_idempotency_key: 5 } }),
    'params.metadata.client_idempotency_key',
  ),
  P(
    'metadata: empty client_idempotency_key',
    send({ metadata: { client_idempotency_key: '' } }),
    'params.metadata.client_idempotency_key',
  ),
  P(
    'metadata: client_idempotency_key of 201 characters',
    send({ metadata: { client_idempotency_key: long(201) } }),
    'params.metadata.client_idempotency_key',
  ),
  P(
    'metadata: key differs from the Idempotency-Key header',
    send({ metadata: { client_idempotency_key: 'a' } }, 'alice', { 'Idempotency-Key': 'b' }),
    'params.metadata.client_idempotency_key',
  ),
  P('metadata: a key starting with $', send({ metadata: { $gt: 1 } }), 'params.metadata'),
  P('metadata: a key with a dot', send({ metadata: { 'a.b': 1 } }), 'params.metadata'),
  P('metadata: a nested $where key', send({ metadata: { x: { $where: 'sleep(1000)' } } }), 'params.metadata'),
  P('metadata: arrays nested 150 deep', send({ metadata: { deep: nested(150) } }), 'params.metadata'),
  P('metadata: arrays nested 100000 deep', a2aRaw(deepRaw(100_000)), 'params.metadata'),
  P(
    'metadata: a __proto__ key',
    raw(send({ metadata: { '<PROTO>': { isAdmin: true } } })),
    'params.metadata.__proto__',
  ),
  P(
    'metadata: a __proto__ key deep down',
    raw(send({ metadata: { a: { b: [{ '<PROTO>': { isAdmin: true } }] } } })),
    'params.metadata.a.b[0].__proto__',
  ),
  P(
    'metadata: a constructor key',
    send({ metadata: { constructor: { prototype: { isAdmin: true } } } }),
    'params.metadata.constructor',
  ),
  P('metadata: a nested prototype key', send({ metadata: { x: { prototype: 1 } } }), 'params.metadata.x.prototype'),
  P('metadata: a key with a NUL', send({ metadata: { 'a\u0000b': 1 } }), 'params.metadata'),
  P('metadata: a value with a NUL', send({ metadata: { ticket: 'WEB\u00007' } }), 'params.metadata.ticket'),
  P(
    'metadata: a question with a NUL',
    send({ intent: 'ask_question', metadata: { question: 'why\u0000?' } }),
    'params.metadata.question',
  ),
  P('message/send: a summary with a NUL', send({ message: text('before\u0000after') }), 'params.message.parts[0].text'),
  P(
    'message/send: a NUL in proposed_action.rationale',
    propose({ rationale: 'because\u0000' }),
    'params.proposed_action.rationale',
  ),
  P('message/send: an unknown top-level param', send({ x_client: 'some-agent/1.0' }), 'params'),
  P('message/send: a typo of artifacts', send({ artifact: [] }), 'params'),
  E('message/send: unknown recipient', send({ recipient: 'nobody@acme' }), 'recipient_not_found'),
  E('message/send: to a teammate who blocked the sender', send({ recipient: 'carol@acme' }), 'teammate_blocked'),
];

const SEND_APPEND: Row[] = [
  P('append: task_id not a UUID', append({ task_id: 'abc' }), 'params.task_id'),
  P('append: task_id a number', append({ task_id: 123 }), 'params.task_id'),
  P('append: task_id an operator object', append({ task_id: { $ne: null } }), 'params.task_id'),
  P('append: task_id a UUID without dashes', append({ task_id: UNKNOWN.replaceAll('-', '') }), 'params.task_id'),
  P('append: task_id with a trailing space', append({ task_id: `${UNKNOWN} ` }), 'params.task_id'),
  P('append: missing message', append({ message: undefined }), 'params.message'),
  P('append: empty text', append({ message: text('') }), 'params.message.parts'),
  P('append: text of 8001 characters', append({ message: text(long(8_001)) }), 'params.message.parts'),
  P('append: payload an array', append({ payload: [1] }), 'params.payload'),
  P('append: payload a string', append({ payload: 'x' }), 'params.payload'),
  P('append: payload over 16 KiB', append({ payload: { blob: long(16_400) } }), 'params.payload'),
  P('append: payload with a $set key', append({ payload: { $set: { status: 'completed' } } }), 'params.payload'),
  P('append: payload key of 101 characters', append({ payload: { [long(101, 'k')]: 1 } }), 'params.payload'),
  P('append: payload arrays nested 150 deep', append({ payload: { deep: nested(150) } }), 'params.payload'),
  P(
    'append: a javascript: link artifact',
    append({ artifacts: [{ type: 'link', url: 'javascript:alert(1)' }] }),
    'params.artifacts[0].url',
  ),
  P(
    'append: client_idempotency_key a number',
    append({ metadata: { client_idempotency_key: 1 } }),
    'params.metadata.client_idempotency_key',
  ),
  P('append: an unknown top-level param', append({ x_trace: 'abc' }), 'params'),
  P(
    'append: a payload with a __proto__ key',
    raw(append({ payload: { '<PROTO>': { status: 'completed' } } })),
    'params.payload.__proto__',
  ),
  P('append: a text with a NUL', append({ message: text('one\u0000more') }), 'params.message.parts[0].text'),
  E('append: unknown thread', append({ task_id: UNKNOWN }), 'thread_not_found'),
  E('append: by a non-participant', append({}, 'carol'), 'not_a_participant'),
  E('append: to a cancelled thread', append({ task_id: T2 }), 'thread_terminal'),
];

const GET_LIST: Row[] = [
  P('tasks/get: no params', a2a({ jsonrpc: '2.0', id: 7, method: 'tasks/get' }), 'params.task_id'),
  P('tasks/get: missing task_id', rpc('tasks/get', {}), 'params.task_id'),
  P('tasks/get: task_id a number', rpc('tasks/get', { task_id: 1 }), 'params.task_id'),
  P('tasks/get: task_id not a UUID', rpc('tasks/get', { task_id: 'abc' }), 'params.task_id'),
  P('tasks/get: task_id an array', rpc('tasks/get', { task_id: [T1] }), 'params.task_id'),
  P('tasks/get: task_id an operator object', rpc('tasks/get', { task_id: { $gt: '' } }), 'params.task_id'),
  P('tasks/get: an unknown param (history_length)', rpc('tasks/get', { task_id: T1, history_length: 5 }), 'params'),
  E('tasks/get: unknown thread', rpc('tasks/get', { task_id: UNKNOWN }), 'thread_not_found'),
  E('tasks/get: by a non-participant', rpc('tasks/get', { task_id: T1 }, 'carol'), 'not_a_participant'),
  E(
    'tasks/get: unknown thread, with a metadata envelope',
    rpc('tasks/get', { task_id: UNKNOWN, metadata: { client: 'handoff-mcp' } }),
    'thread_not_found',
  ),
  E(
    'tasks/get: by a non-participant, with a metadata envelope',
    rpc('tasks/get', { task_id: T1, metadata: { client: 'handoff-mcp' } }, 'carol'),
    'not_a_participant',
  ),
  P(
    'tasks/get: metadata envelope over 16 KiB',
    rpc('tasks/get', { task_id: T1, metadata: { blob: long(16_400) } }),
    'params.metadata',
  ),
  P(
    'tasks/get: metadata envelope nested 21 deep',
    rpc('tasks/get', { task_id: T1, metadata: { deep: nested(21) } }),
    'params.metadata',
  ),
  P('tasks/get: metadata envelope an array', rpc('tasks/get', { task_id: T1, metadata: [1] }), 'params.metadata'),
  P(
    'tasks/get: metadata envelope with a __proto__ key',
    raw(rpc('tasks/get', { task_id: T1, metadata: { '<PROTO>': { isAdmin: true } } })),
    'params.metadata.__proto__',
  ),
  P('tasks/list: metadata envelope a string', rpc('tasks/list', { metadata: 'x' }), 'params.metadata'),
  P(
    'agents/list: metadata envelope nested 150 deep',
    rpc('agents/list', { metadata: { deep: nested(150) } }),
    'params.metadata',
  ),
  P('tasks/list: limit 0', list({}, { limit: 0 }), 'params.page.limit'),
  P('tasks/list: limit 201', list({}, { limit: 201 }), 'params.page.limit'),
  P('tasks/list: limit at the top level instead of in page', rpc('tasks/list', { limit: 5 }), 'params'),
  P('tasks/list: an unknown filter key', list({ role: 'sender', stauts: ['pending'] }), 'params.filter'),
  P('tasks/list: an unknown page key', list({}, { limit: 5, offset: 10 }), 'params.page'),
  P('tasks/list: limit 1.5', list({}, { limit: 1.5 }), 'params.page.limit'),
  P('tasks/list: limit "10"', list({}, { limit: '10' }), 'params.page.limit'),
  P('tasks/list: limit -1', list({}, { limit: -1 }), 'params.page.limit'),
  P('tasks/list: limit null', list({}, { limit: null }), 'params.page.limit'),
  P('tasks/list: status not in the enum', list({ status: ['open'] }), 'params.filter.status[0]'),
  P('tasks/list: status a string, not an array', list({ status: 'pending' }), 'params.filter.status'),
  P(
    'tasks/list: more statuses than there are',
    list({ status: [...THREAD_STATUSES, 'pending'] }),
    'params.filter.status',
  ),
  P('tasks/list: status holds null', list({ status: [null] }), 'params.filter.status[0]'),
  P('tasks/list: status "canceled" (US spelling)', list({ status: ['canceled'] }), 'params.filter.status[0]'),
  P('tasks/list: role "admin"', list({ role: 'admin' }), 'params.filter.role'),
  P('tasks/list: role a number', list({ role: 1 }), 'params.filter.role'),
  P('tasks/list: since "yesterday"', list({ since: 'yesterday' }), 'params.filter.since'),
  P('tasks/list: since a number', list({ since: 1_700_000_000 }), 'params.filter.since'),
  P('tasks/list: since month 13', list({ since: '2024-13-01T00:00:00Z' }), 'params.filter.since'),
  P('tasks/list: since a date without time', list({ since: '2024-01-01' }), 'params.filter.since'),
  P('tasks/list: since with offset +25:00', list({ since: '2024-01-01T00:00:00+25:00' }), 'params.filter.since'),
  P('tasks/list: forged cursor AAAA', rpc('tasks/list', { page: { cursor: 'AAAA' } }), 'params.page.cursor'),
  P(
    'tasks/list: cursor not base64',
    rpc('tasks/list', { page: { cursor: '!!! not a cursor !!!' } }),
    'params.page.cursor',
  ),
  P('tasks/list: cursor encoding an object', cursor({ created_at: 1, id: 'x' }), 'params.page.cursor'),
  P('tasks/list: cursor with an operator as id', cursor([1, { $gt: '' }]), 'params.page.cursor'),
  P('tasks/list: cursor with a string timestamp', cursor(['1', 'x']), 'params.page.cursor'),
  P('tasks/list: cursor with an id of 65 characters', cursor([1, long(65)]), 'params.page.cursor'),
  P('tasks/list: cursor whose timestamp is not a valid date (1e20)', cursor([1e20, 'x']), 'params.page.cursor'),
  P('tasks/list: cursor of 201 characters', rpc('tasks/list', { page: { cursor: long(201) } }), 'params.page.cursor'),
  P('tasks/list: cursor a number', rpc('tasks/list', { page: { cursor: 5 } }), 'params.page.cursor'),
  P('tasks/list: empty cursor', rpc('tasks/list', { page: { cursor: '' } }), 'params.page.cursor'),
  P('tasks/list: filter an array', rpc('tasks/list', { filter: ['pending'] }), 'params.filter'),
  P('tasks/list: filter null', rpc('tasks/list', { filter: null }), 'params.filter'),
  P('tasks/list: page a string', rpc('tasks/list', { page: 'next' }), 'params.page'),
];

const UPDATE_CANCEL: Row[] = [
  P('tasks/update: missing task_id', update({ task_id: undefined }), 'params.task_id'),
  P('tasks/update: missing transition', update({ transition: undefined }), 'params.transition'),
  P('tasks/update: transition "cancel" (not an update)', update({ transition: 'cancel' }), 'params.transition'),
  P('tasks/update: transition in capitals', update({ transition: 'ACCEPT' }), 'params.transition'),
  P('tasks/update: transition "reopen"', update({ transition: 'reopen' }), 'params.transition'),
  P('tasks/update: transition a number', update({ transition: 1 }), 'params.transition'),
  P('tasks/update: transition null', update({ transition: null }), 'params.transition'),
  P(
    'tasks/update: result_summary of 8001 characters',
    update({ transition: 'complete', result_summary: long(8_001) }),
    'params.result_summary',
  ),
  P(
    'tasks/update: empty result_summary',
    update({ transition: 'complete', result_summary: '' }),
    'params.result_summary',
  ),
  P(
    'tasks/update: result_summary a number',
    update({ transition: 'complete', result_summary: 1 }),
    'params.result_summary',
  ),
  P('tasks/update: reason of 4001 characters', update({ transition: 'decline', reason: long(4_001) }), 'params.reason'),
  P('tasks/update: empty reason', update({ transition: 'decline', reason: '' }), 'params.reason'),
  P(
    'tasks/update: 51 artifacts',
    update({ artifacts: Array.from({ length: 51 }, () => ({ type: 'link', url: 'https://e.com' })) }),
    'params.artifacts',
  ),
  P(
    'tasks/update: a javascript: link artifact',
    update({ artifacts: [{ type: 'link', url: 'javascript:x' }] }),
    'params.artifacts[0].url',
  ),
  P('tasks/update: artifacts an object', update({ artifacts: {} }), 'params.artifacts'),
  P('tasks/update: session_id a number', update({ session_id: 1 }), 'params.session_id'),
  P(
    'tasks/update: empty client_idempotency_key',
    update({ metadata: { client_idempotency_key: '' } }),
    'params.metadata.client_idempotency_key',
  ),
  P('tasks/update: metadata a string', update({ metadata: 'x' }), 'params.metadata'),
  P('tasks/update: an unknown param', update({ x_note: 'hi' }), 'params'),
  P(
    'tasks/update: an unknown verdict input (a typo of goal_token)',
    update({ verdict: { goal_tokn: 'hto_x' } }),
    'params.verdict',
  ),
  P('tasks/update: a reason with a NUL', update({ transition: 'decline', reason: 'no\u0000' }), 'params.reason'),
  P(
    'tasks/update: a result_summary with a NUL',
    update({ transition: 'complete', result_summary: 'done\u0000' }),
    'params.result_summary',
  ),
  P('tasks/update: task_id not a UUID', update({ task_id: 'abc' }), 'params.task_id'),
  E('tasks/update: unknown thread', update({ task_id: UNKNOWN }), 'thread_not_found'),
  E('tasks/update: by a non-participant', update({}, 'carol'), 'not_a_participant'),
  E('tasks/update: the sender accepts', update({}, 'alice'), 'not_authorized_transition'),
  E('tasks/update: complete a pending thread', update({ transition: 'complete' }), 'invalid_transition'),
  E('tasks/update: accept a cancelled thread', update({ task_id: T2 }), 'thread_terminal'),
  P('tasks/cancel: missing task_id', cancel({ task_id: undefined }), 'params.task_id'),
  P('tasks/cancel: task_id not a UUID', cancel({ task_id: 'abc' }), 'params.task_id'),
  P('tasks/cancel: empty reason', cancel({ reason: '' }), 'params.reason'),
  P('tasks/cancel: reason of 4001 characters', cancel({ reason: long(4_001) }), 'params.reason'),
  P('tasks/cancel: reason a number', cancel({ reason: 1 }), 'params.reason'),
  P('tasks/cancel: an unknown param', cancel({ x_note: 'bye' }), 'params'),
  P('tasks/cancel: a reason with a NUL', cancel({ reason: 'bye\u0000' }), 'params.reason'),
  P(
    'tasks/cancel: client_idempotency_key a number',
    cancel({ metadata: { client_idempotency_key: 1 } }),
    'params.metadata.client_idempotency_key',
  ),
  E('tasks/cancel: by the recipient', cancel({}, 'bob'), 'not_authorized_transition'),
  E('tasks/cancel: by a non-participant', cancel({}, 'carol'), 'not_a_participant'),
  E('tasks/cancel: unknown thread', cancel({ task_id: UNKNOWN }), 'thread_not_found'),
  E('tasks/update: decline a cancelled thread', update({ task_id: T2, transition: 'decline' }), 'thread_terminal'),
  E(
    'tasks/update: complete a cancelled thread',
    update({ task_id: T2, transition: 'complete', result_summary: 'done' }),
    'thread_terminal',
  ),
  P('agents/list: role a number', rpc('agents/list', { role: 1 }), 'params.role'),
  P('agents/list: role of 65 characters', rpc('agents/list', { role: long(65) }), 'params.role'),
  P('agents/list: skill an object', rpc('agents/list', { skill: { $ne: null } }), 'params.skill'),
  P('agents/list: skill of 101 characters', rpc('agents/list', { skill: long(101) }), 'params.skill'),
  P('agents/list: repo an array', rpc('agents/list', { repo: ['apps/web/'] }), 'params.repo'),
  P('agents/list: repo of 1025 characters', rpc('agents/list', { repo: long(1_025) }), 'params.repo'),
  P('agents/list: role an operator object', rpc('agents/list', { role: { $ne: null } }), 'params.role'),
  P('agents/list: an unknown param (team)', rpc('agents/list', { role: 'frontend', team: 'acme' }), 'params'),
  P('agents/list: a role with a NUL', rpc('agents/list', { role: 'front\u0000end' }), 'params.role'),
];

const ADMIN: Row[] = [
  E('POST /admin/agents: a teammate key', { ...card({}), as: 'alice' }, 'unauthenticated'),
  E('POST /admin/agents: no key', { ...card({}), as: 'none' }, 'unauthenticated'),
  E(
    'POST /admin/agents: a wrong admin key',
    { ...card({}), as: { authorization: 'Bearer hra_wrong_wrong_wrong_wrong_wrong' } },
    'unauthenticated',
  ),
  P('POST /admin/agents: missing handle', card({ handle: undefined }), 'body.handle'),
  P('POST /admin/agents: missing name', card({ name: undefined }), 'body.name'),
  P('POST /admin/agents: missing role', card({ role: undefined }), 'body.role'),
  P('POST /admin/agents: display_name differing from name', card({ display_name: 'Zed Z' }), 'body.display_name'),
  P(
    'POST /admin/agents: neither name nor display_name',
    card({ name: undefined, email: 'zed@acme.test' }),
    'body.name',
  ),
  P('POST /admin/agents: empty display_name', card({ name: undefined, display_name: '' }), 'body.display_name'),
  P('POST /admin/agents: email not an email', card({ email: 'zed at acme' }), 'body.email'),
  P('POST /admin/agents: email a number', card({ email: 7 }), 'body.email'),
  P('POST /admin/agents: a name with a NUL', card({ name: 'Z\u0000ed' }), 'body.name'),
  P('POST /admin/agents: extra field api_key', card({ api_key: 'hr_chosen' }), 'body'),
  P('POST /admin/agents: extra field status', card({ status: 'admin' }), 'body'),
  P('POST /admin/agents: handle a number', card({ handle: 1 }), 'body.handle'),
  P('POST /admin/agents: handle with a space', card({ handle: 'new user@acme' }), 'body.handle'),
  P('POST /admin/agents: handle with a Cyrillic е', card({ handle: 'zed@acm\u0435' }), 'body.handle'),
  P('POST /admin/agents: handle of 129 characters', card({ handle: longHandle }), 'body.handle'),
  P('POST /admin/agents: handle with a zero-width joiner', card({ handle: 'z\u200ded@acme' }), 'body.handle'),
  P('POST /admin/agents: handle with a trailing newline', card({ handle: 'zed@acme\n' }), 'body.handle'),
  P('POST /admin/agents: empty name', card({ name: '' }), 'body.name'),
  P('POST /admin/agents: name of 201 characters', card({ name: long(201) }), 'body.name'),
  P('POST /admin/agents: name a number', card({ name: 1 }), 'body.name'),
  P('POST /admin/agents: role of 65 characters', card({ role: long(65) }), 'body.role'),
  P('POST /admin/agents: skills a string', card({ skills: 'node' }), 'body.skills'),
  P('POST /admin/agents: skills holds a number', card({ skills: [1] }), 'body.skills[0]'),
  P('POST /admin/agents: skills holds an empty string', card({ skills: [''] }), 'body.skills[0]'),
  P('POST /admin/agents: 101 skills', card({ skills: Array.from({ length: 101 }, (_, i) => `s${i}`) }), 'body.skills'),
  P('POST /admin/agents: repos_owned an object', card({ repos_owned: { a: 1 } }), 'body.repos_owned'),
  P('POST /admin/agents: tools holds null', card({ tools: [null] }), 'body.tools[0]'),
  P('POST /admin/agents: slack_user_id in lower case', card({ slack_user_id: 'u0123456' }), 'body.slack_user_id'),
  P('POST /admin/agents: slack_user_id too short', card({ slack_user_id: 'U1' }), 'body.slack_user_id'),
  P('POST /admin/agents: slack_user_id with a wrong prefix', card({ slack_user_id: 'X0123456' }), 'body.slack_user_id'),
  P('POST /admin/agents: slack_user_id a number', card({ slack_user_id: 123456 }), 'body.slack_user_id'),
  P(
    'POST /admin/agents: slack_user_id with a trailing newline',
    card({ slack_user_id: 'U0123456\n' }),
    'body.slack_user_id',
  ),
  P('POST /admin/agents: slack_user_id as a mention', card({ slack_user_id: '<@U0123456>' }), 'body.slack_user_id'),
  P('POST /admin/agents: body an array', rest('POST', '/admin/agents', [{ handle: 'zed@acme' }], 'admin'), 'body'),
  P('POST /admin/agents: body a string', rest('POST', '/admin/agents', 'zed@acme', 'admin'), 'body'),
  P('POST /admin/agents: body null', rest('POST', '/admin/agents', null, 'admin'), 'body'),
  E(
    'POST /admin/agents: body not JSON',
    { ...rest('POST', '/admin/agents', undefined, 'admin'), raw: '{handle: zed@acme}' },
    'parse_error',
  ),
  E('POST /admin/agents: body over 1 MiB', card({ name: overMiB }), 'invalid_request', 413),
  { ...E('POST /admin/agents: a taken handle', card({ handle: 'alice@acme' }), 'conflict'), field: 'body.handle' },
  {
    ...E(
      'POST /admin/agents: a taken handle with a fresh slack_user_id',
      card({ handle: 'alice@acme', slack_user_id: 'U0FRESH1' }),
      'conflict',
    ),
    field: 'body.handle',
  },
  {
    ...E('POST /admin/agents: a taken slack_user_id', card({ slack_user_id: 'U0CAROL1' }), 'conflict'),
    field: 'body.slack_user_id',
  },
  E(
    'POST /admin/agents/:handle/keys: a teammate key',
    rest('POST', '/admin/agents/bob@acme/keys', undefined, 'alice'),
    'unauthenticated',
  ),
  E(
    'POST /admin/agents/:handle/keys: no key',
    rest('POST', '/admin/agents/bob@acme/keys', undefined, 'none'),
    'unauthenticated',
  ),
  P(
    'POST /admin/agents/:handle/keys: not a handle',
    rest('POST', `/admin/agents/${enc('not a handle')}/keys`, undefined, 'admin'),
    'path.handle',
  ),
  P(
    'POST /admin/agents/:handle/keys: handle of 129 characters',
    rest('POST', `/admin/agents/${longHandle}/keys`, undefined, 'admin'),
    'path.handle',
  ),
  E(
    'POST /admin/agents/:handle/keys: unknown handle',
    rest('POST', '/admin/agents/nobody@acme/keys', undefined, 'admin'),
    'recipient_not_found',
  ),
  E(
    'POST /admin/agents/:handle/disable: a teammate key',
    rest('POST', '/admin/agents/alice@acme/disable', undefined, 'bob'),
    'unauthenticated',
  ),
  E(
    'POST /admin/agents/:handle/disable: no key',
    rest('POST', '/admin/agents/alice@acme/disable', undefined, 'none'),
    'unauthenticated',
  ),
  P(
    'POST /admin/agents/:handle/disable: handle with a space',
    rest('POST', `/admin/agents/${enc('bob @acme')}/disable`, undefined, 'admin'),
    'path.handle',
  ),
  P(
    'POST /admin/agents/:handle/disable: handle with a Cyrillic е',
    rest('POST', `/admin/agents/${enc('bob@acm\u0435')}/disable`, undefined, 'admin'),
    'path.handle',
  ),
  E(
    'POST /admin/agents/:handle/disable: unknown handle',
    rest('POST', '/admin/agents/nobody@acme/disable', undefined, 'admin'),
    'recipient_not_found',
  ),
  E('GET /admin/agents: no such route', rest('GET', '/admin/agents', undefined, 'admin'), 'method_not_found'),
];

const TEAMMATE_REST: Row[] = [
  E('GET /agents/me: the admin key', rest('GET', '/agents/me', undefined, 'admin'), 'unauthenticated'),
  E('GET /agents/me: no key', rest('GET', '/agents/me', undefined, 'none'), 'unauthenticated'),
  E(
    'GET /agents/me: "Bearer" with no key',
    rest('GET', '/agents/me', undefined, { authorization: 'Bearer' }),
    'unauthenticated',
  ),
  E('PUT /agents/me/card: the admin key', putCard({ name: 'Admin' }, 'admin'), 'unauthenticated'),
  E('PUT /agents/me/card: no key', putCard({ name: 'Nobody' }, 'none'), 'unauthenticated'),
  P('PUT /agents/me/card: extra field handle', putCard({ handle: 'bob@acme' }), 'body'),
  P('PUT /agents/me/card: extra field status', putCard({ status: 'disabled' }), 'body'),
  P('PUT /agents/me/card: extra field notification_secret', putCard({ notification_secret: 'whsec_x' }), 'body'),
  P('PUT /agents/me/card: notification_url ftp://x', putCard({ notification_url: 'ftp://x' }), 'body.notification_url'),
  P(
    'PUT /agents/me/card: notification_url javascript:',
    putCard({ notification_url: 'javascript:alert(1)' }),
    'body.notification_url',
  ),
  P(
    'PUT /agents/me/card: notification_url file:',
    putCard({ notification_url: 'file:///etc/passwd' }),
    'body.notification_url',
  ),
  P(
    'PUT /agents/me/card: notification_url not a URL',
    putCard({ notification_url: 'not a url' }),
    'body.notification_url',
  ),
  P('PUT /agents/me/card: notification_url a number', putCard({ notification_url: 80 }), 'body.notification_url'),
  P(
    'PUT /agents/me/card: notification_url of 2049 characters',
    putCard({ notification_url: `https://e.com/${long(2_035)}` }),
    'body.notification_url',
  ),
  P('PUT /agents/me/card: empty name', putCard({ name: '' }), 'body.name'),
  P('PUT /agents/me/card: name a number', putCard({ name: 1 }), 'body.name'),
  P('PUT /agents/me/card: role of 65 characters', putCard({ role: long(65) }), 'body.role'),
  P('PUT /agents/me/card: skills a string', putCard({ skills: 'node' }), 'body.skills'),
  P(
    'PUT /agents/me/card: 101 skills',
    putCard({ skills: Array.from({ length: 101 }, (_, i) => `s${i}`) }),
    'body.skills',
  ),
  P('PUT /agents/me/card: tools holds a number', putCard({ tools: [1] }), 'body.tools[0]'),
  P('PUT /agents/me/card: repos_owned holds an empty string', putCard({ repos_owned: [''] }), 'body.repos_owned[0]'),
  P(
    'PUT /agents/me/card: a valid field next to a bad one',
    putCard({ name: 'Alice B', notification_url: 'ftp://x' }),
    'body.notification_url',
  ),
  P('PUT /agents/me/card: body an array', putCard([{ name: 'x' }]), 'body'),
  P('PUT /agents/me/card: body a string', putCard('x'), 'body'),
  P('PUT /agents/me/card: body null', putCard(null), 'body'),
  E('PUT /agents/me/card: body not JSON', { ...putCard(undefined), raw: 'name=x' }, 'parse_error'),
  E('PUT /agents/me/card: body over 1 MiB', putCard({ name: overMiB }), 'invalid_request', 413),
  E('POST /agents/me/keys: the admin key', rest('POST', '/agents/me/keys', undefined, 'admin'), 'unauthenticated'),
  E('POST /agents/me/keys: no key', rest('POST', '/agents/me/keys', undefined, 'none'), 'unauthenticated'),
  E('GET /agents/me/block: the admin key', rest('GET', '/agents/me/block', undefined, 'admin'), 'unauthenticated'),
  P('POST /agents/me/block: block yourself', rest('POST', '/agents/me/block', { handle: 'alice@acme' }), 'body.handle'),
  P('POST /agents/me/block: empty body object', rest('POST', '/agents/me/block', {}), 'body.handle'),
  P(
    'POST /agents/me/block: extra field',
    rest('POST', '/agents/me/block', { handle: 'bob@acme', reason: 'spam' }),
    'body',
  ),
  P('POST /agents/me/block: handle a number', rest('POST', '/agents/me/block', { handle: 1 }), 'body.handle'),
  P(
    'POST /agents/me/block: handle with a space',
    rest('POST', '/agents/me/block', { handle: 'bob @acme' }),
    'body.handle',
  ),
  P(
    'POST /agents/me/block: handle with a Cyrillic е',
    rest('POST', '/agents/me/block', { handle: 'bob@acm\u0435' }),
    'body.handle',
  ),
  P(
    'POST /agents/me/block: handle an array',
    rest('POST', '/agents/me/block', { handle: ['bob@acme'] }),
    'body.handle',
  ),
  E(
    'POST /agents/me/block: unknown handle',
    rest('POST', '/agents/me/block', { handle: 'nobody@acme' }),
    'recipient_not_found',
  ),
  E(
    'POST /agents/me/block: the admin key',
    rest('POST', '/agents/me/block', { handle: 'bob@acme' }, 'admin'),
    'unauthenticated',
  ),
  E('POST /agents/me/block: body not JSON', { ...rest('POST', '/agents/me/block'), raw: 'bob@acme' }, 'parse_error'),
  E(
    'POST /agents/me/block: body over 1 MiB',
    rest('POST', '/agents/me/block', { handle: overMiB }),
    'invalid_request',
    413,
  ),
  P(
    'DELETE /agents/me/block/:handle: not a handle',
    rest('DELETE', `/agents/me/block/${enc('not a handle')}`),
    'path.handle',
  ),
  P(
    'DELETE /agents/me/block/:handle: handle of 129 characters',
    rest('DELETE', `/agents/me/block/${longHandle}`),
    'path.handle',
  ),
  P(
    'DELETE /agents/me/block/:handle: handle with a zero-width joiner',
    rest('DELETE', `/agents/me/block/${enc('bob\u200d@acme')}`),
    'path.handle',
  ),
  E(
    'DELETE /agents/me/block/:handle: the admin key',
    rest('DELETE', '/agents/me/block/bob@acme', undefined, 'admin'),
    'unauthenticated',
  ),
  P('GET /agents: unknown query key', rest('GET', '/agents?team=acme'), 'query'),
  P('GET /agents: role given twice', rest('GET', '/agents?role=a&role=b'), 'query.role'),
  P('GET /agents: bracket operator in the query', rest('GET', '/agents?role[$ne]=x'), 'query'),
  P('GET /agents: repo of 1025 characters', rest('GET', `/agents?repo=${long(1_025)}`), 'query.repo'),
  E('GET /agents: the admin key', rest('GET', '/agents', undefined, 'admin'), 'unauthenticated'),
  E('GET /agents: no key', rest('GET', '/agents', undefined, 'none'), 'unauthenticated'),
  E('GET /nope: unknown route', rest('GET', '/nope'), 'method_not_found'),
  E(
    'PATCH /agents/me/card: unknown method on a route',
    rest('PATCH', '/agents/me/card', { name: 'x' }),
    'method_not_found',
  ),
  E('GET /a2a: JSON-RPC only answers POST', rest('GET', '/a2a'), 'method_not_found'),
  E('DELETE /agents/me: no such route', rest('DELETE', '/agents/me'), 'method_not_found'),
];

const ROWS: Row[] = [
  ...ENVELOPE,
  ...SEND_NEW,
  ...SEND_APPEND,
  ...GET_LIST,
  ...UPDATE_CANCEL,
  ...ADMIN,
  ...TEAMMATE_REST,
];

// ── the relay, its fixtures, and the database snapshot ──
let relay: TestRelay;
const keys: Record<'alice' | 'bob' | 'carol', string> = { alice: '', bob: '', carol: '' };
const ids = { t1: '', t2: '' };

const fill = (s: string) => s.replaceAll(T1, ids.t1).replaceAll(T2, ids.t2);

async function call(req: Req): Promise<{ status: number; body: any }> {
  const auth =
    req.as === 'none'
      ? undefined
      : typeof req.as === 'object'
        ? req.as.authorization
        : `Bearer ${req.as === 'admin' ? relay.adminKey : keys[req.as]}`;
  const body =
    req.raw !== undefined ? fill(req.raw) : req.json === undefined ? undefined : fill(JSON.stringify(req.json));
  const response = await fetch(`${relay.url}${fill(req.path)}`, {
    method: req.method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(auth ? { authorization: auth } : {}),
      ...req.headers,
    },
    body,
  });
  const raw = await response.text();
  try {
    return { status: response.status, body: JSON.parse(raw) };
  } catch {
    return { status: response.status, body: raw.slice(0, 200) };
  }
}

const COLLECTIONS = ['threads', 'messages', 'agents', 'api_keys', 'slack_links', 'idempotency'];

/** Count and hash per collection. Of threads, what the workers and sweeps write on their own is left out: `version`, the pending jobs (the outbox) and the armed timer step. */
async function snapshot(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of COLLECTIONS) {
    const docs = await relay.store.db.collection(name).find().toArray();
    const stable = docs
      .map(
        ({
          version: _v,
          outbox_dirty: _d,
          outbox_enqueued: _e,
          jobs_pending: _j,
          pending_since: _p,
          next_timer: _n,
          next_due_at: _due,
          timer_version: _t,
          ...doc
        }) => JSON.stringify(doc),
      )
      .sort();
    out[name] =
      `${docs.length} docs, sha256 ${createHash('sha256').update(stable.join('\n')).digest('hex').slice(0, 16)}`;
  }
  return out;
}

beforeAll(async () => {
  relay = await startTestRelay({ name: 'bad_input', env: { RELAY_RATE_LIMIT_PER_MINUTE: '100000' } });
  keys.alice = await relay.register({
    handle: 'alice@acme',
    name: 'Alice',
    role: 'backend',
    skills: ['node'],
    repos_owned: ['services/api/'],
  });
  keys.bob = await relay.register({ handle: 'bob@acme', name: 'Bob', role: 'frontend', skills: ['react'] });
  keys.carol = await relay.register({ handle: 'carol@acme', name: 'Carol', role: 'qa', slack_user_id: 'U0CAROL1' });
  const ok = async (req: Req) => {
    const { body } = await call(req);
    if (!body?.result && !Array.isArray(body?.blocked)) throw new Error(`fixture failed: ${JSON.stringify(body)}`);
    return body.result;
  };
  ids.t1 = (await ok(send({}))).task_id;
  ids.t2 = (await ok(send({ message: text('to be cancelled') }))).task_id;
  await ok(rpc('tasks/cancel', { task_id: ids.t2 }));
  await ok(rest('POST', '/agents/me/block', { handle: 'alice@acme' }, 'carol'));
});

afterAll(async () => {
  await relay?.stop();
});

describe('malformed requests: the right error, never a 5xx, nothing written', () => {
  let baseline: Record<string, string>;

  beforeAll(async () => {
    baseline = await snapshot();
  });

  test('the table has at least 150 rows with distinct names', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(150);
    expect(new Set(ROWS.map((r) => r.name)).size).toBe(ROWS.length);
  });

  test.each(ROWS)('$name', async (row) => {
    const { status, body } = await call(row.req);
    const rpcShape = isA2a(row.req);
    const message: unknown = rpcShape ? body?.error?.message : body?.message;
    const got = {
      under500: status < 500,
      status,
      code: rpcShape ? body?.error?.data?.code : body?.code,
      numeric: rpcShape ? body?.error?.code : undefined,
      request_id: typeof (rpcShape ? body?.error?.data?.request_id : body?.request_id),
      field:
        row.field === undefined
          ? undefined
          : typeof message === 'string' && startsWithField(message, row.field)
            ? row.field
            : message,
      db: await snapshot(),
    };
    const want = {
      under500: true,
      status: row.status,
      code: row.code,
      numeric: rpcShape ? RPC_CODES[row.code] : undefined,
      request_id: 'string',
      field: row.field,
      db: baseline,
    };
    // A row that wrongly wrote fails alone: the next row compares against what is there now.
    const db = got.db;
    try {
      expect(got).toEqual(want);
    } finally {
      baseline = db;
    }
  });
});

/** The message names the field: it starts with the path, followed by ":", " ", "." or "[". */
function startsWithField(message: string, field: string): boolean {
  return message.startsWith(field) && /^[:.[ ]/.test(message.slice(field.length));
}

describe('accepted: the A2A fields the README allows beside the wire ones, and unusual but valid text', () => {
  const result = async (req: Req) => {
    const { status, body } = await call(req);
    expect(status).toBe(200);
    expect(body.error).toBeUndefined();
    return body.result;
  };
  const created = async (over: Record<string, unknown>) => (await result(send(over))).task_id as string;
  const summaryOf = async (id: string) => (await result(rpc('tasks/get', { task_id: id }))).summary as string;

  test('message/send (new) with A2A configuration and an A2A-shaped message', async () => {
    const id = await created({
      configuration: { blocking: false },
      message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'A2A shaped' }] },
    });
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('tasks/list pages of 200 and of 150', async () => {
    expect((await result(list({ role: 'sender' }, { limit: 200 }))).items).toEqual(expect.any(Array));
    expect((await result(list({}, { limit: 150 }))).items).toEqual(expect.any(Array));
  });

  test.each(['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'])(
    'Content-Type %s is JSON',
    async (type) => {
      expect(
        (
          await result(
            a2a({ jsonrpc: '2.0', id: 1, method: 'agents/list', params: {} }, 'alice', { 'content-type': type }),
          )
        ).teammates,
      ).toEqual(expect.any(Array));
    },
  );

  test('the JSON-RPC id comes back as sent (string, null)', async () => {
    expect((await call(a2a({ jsonrpc: '2.0', id: 'req-1', method: 'agents/list', params: {} }))).body.id).toBe('req-1');
    expect((await call(a2a({ jsonrpc: '2.0', id: null, method: 'agents/list', params: {} }))).body.id).toBeNull();
  });

  test.each([
    ['an RTL override', 'abc \u202Etxt.exe\u202C done'],
    ['emoji with zero-width joiners', 'ship it \u{1F469}\u200D\u{1F4BB}\u{1F680}'],
    ['exactly 8000 characters', long(8_000)],
  ])('a summary with %s is stored and read back exactly', async (_name, summary) => {
    const id = await created({ message: text(summary) });
    expect(await summaryOf(id)).toBe(summary);
  });

  test('POST /admin/agents takes display_name for name and an email, and answers agent_id beside the card and key', async () => {
    const { status, body } = await call(
      rest(
        'POST',
        '/admin/agents',
        { handle: 'peer@acme', display_name: 'Peer Person', email: 'peer@acme.test', role: 'qa' },
        'admin',
      ),
    );
    expect(status).toBe(201);
    expect(body).toMatchObject({
      handle: 'peer@acme',
      agent_id: 'peer@acme',
      name: 'Peer Person',
      role: 'qa',
      api_key: expect.stringMatching(/^hr_/),
    });
    expect(body).not.toHaveProperty('email');
    const same = await call(
      rest(
        'POST',
        '/admin/agents',
        { handle: 'peer2@acme', name: 'Peer Two', display_name: 'Peer Two', role: 'qa' },
        'admin',
      ),
    );
    expect(same.status).toBe(201);
    expect(same.body.agent_id).toBe('peer2@acme');
  });

  test('exactly 50 artifacts are accepted', async () => {
    const id = await created({
      artifacts: Array.from({ length: 50 }, (_, i) => ({ type: 'link', url: `https://e.com/${i}` })),
    });
    expect((await result(rpc('tasks/get', { task_id: id }))).artifacts).toHaveLength(50);
  });
});
