// The /mcp session registry's rules, on a clock the test moves: a session is its key's alone, ends when idle (never
// while a request or a stream is open), and one key's sessions are bounded, refusing only when each is answering.
import { EventEmitter } from 'node:events';
import { McpSessions, keyOwner, type McpSessionPort } from '../../mcp/mcp-sessions';

class FakeSession implements McpSessionPort {
  closed = false;
  async close(): Promise<void> {
    this.closed = true;
  }
}

let now = 0;
let sessions: McpSessions<FakeSession>;
const alice = keyOwner('hr_alice');
const bob = keyOwner('hr_bob');

/** A response that is still open; `end()` closes it. */
function response(): { once: (event: 'close', listener: () => void) => unknown; end: () => void } {
  const emitter = new EventEmitter();
  return { once: (event, listener) => emitter.once(event, listener), end: () => void emitter.emit('close') };
}

beforeEach(() => {
  now = 1_000_000;
  sessions = new McpSessions<FakeSession>({ idleMs: 60_000, perKey: 2 }, () => now);
});

afterEach(async () => {
  await sessions.closeAll();
});

test('a session is found only with the key that opened it; the registry keeps a fingerprint, never the key', () => {
  const s = new FakeSession();
  sessions.add('s1', alice, s);
  expect(sessions.find('s1', alice)).toBe(s);
  expect(sessions.find('s1', bob)).toBeUndefined();
  expect(sessions.find('s2', alice)).toBeUndefined();
  expect(alice).toMatch(/^[0-9a-f]{64}$/);
  expect(alice).not.toContain('hr_alice');
});

test('a session idle past idleMs is closed; an open request or stream keeps it, and its end restarts the count', async () => {
  const [idle, busy, streaming] = [new FakeSession(), new FakeSession(), new FakeSession()];
  sessions.add('idle', alice, idle);
  sessions.add('busy', alice, busy);
  sessions.add('streaming', bob, streaming);
  const request = response();
  const stream = response();
  sessions.use('busy', request, false);
  sessions.use('streaming', stream, true);
  now += 60_000;
  await sessions.expire();
  expect([idle.closed, busy.closed, streaming.closed]).toEqual([true, false, false]);
  expect(sessions.find('idle', alice)).toBeUndefined();

  request.end();
  stream.end();
  now += 59_999;
  await sessions.expire();
  expect([busy.closed, streaming.closed]).toEqual([false, false]);
  now += 1;
  await sessions.expire();
  expect([busy.closed, streaming.closed]).toEqual([true, true]);
  expect(sessions.size).toBe(0);
});

test("room for a key's next session closes its least recently used one not answering a request, else refuses", async () => {
  const [older, newer, others] = [new FakeSession(), new FakeSession(), new FakeSession()];
  sessions.add('older', alice, older);
  now += 1;
  sessions.add('newer', alice, newer);
  sessions.add('others', bob, others);
  // The older one holds a GET stream only: that does not make it busy.
  sessions.use('older', response(), true);
  expect(await sessions.makeRoom(alice)).toBe(true);
  expect([older.closed, newer.closed, others.closed]).toEqual([true, false, false]);

  sessions.add('third', alice, new FakeSession());
  const [a, b] = [response(), response()];
  sessions.use('newer', a, false);
  sessions.use('third', b, false);
  expect(await sessions.makeRoom(alice)).toBe(false);
  expect(newer.closed).toBe(false);
  expect(await sessions.makeRoom(bob)).toBe(true); // another key's count is its own
  a.end();
  expect(await sessions.makeRoom(alice)).toBe(true);
  expect(newer.closed).toBe(true);
});

test('closeAll closes every session and opens no more', async () => {
  const s = new FakeSession();
  sessions.add('s1', alice, s);
  expect(sessions.open).toBe(true);
  await sessions.closeAll();
  expect(s.closed).toBe(true);
  expect(sessions.open).toBe(false);
  expect(sessions.size).toBe(0);
});
