// The web inbox's text search against a real relay: words of summaries and of messages added later are found once
// their call answered (the request writes them), only in the searcher's own threads, whatever the case and accents;
// several words; pages with a cursor; a purged thread is gone; the layout-9 migration fills threads written before
// (and drops layout 8's words per participant).
import { migrateStore, SCHEMA_VERSION, schemaVersion } from '../../relay-core/store/migrate';
import { purgeThread } from '../../relay-core/store/thread-purge';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';
import { waitUntil } from '../helpers/wait-until';

const clock = new TestClock();
let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;
let aliceCookie: string;
let bobCookie: string;
let carolCookie: string;

async function post(path: string, fields: Record<string, string>, cookie?: string): Promise<Response> {
  return fetch(`${relay.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: relay.url,
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  });
}

async function get(path: string, cookie: string): Promise<{ status: number; html: string }> {
  const response = await fetch(`${relay.url}${path}`, { redirect: 'manual', headers: { cookie } });
  return { status: response.status, html: await response.text() };
}

async function signIn(key: string): Promise<string> {
  const { body } = await relay.rest('POST', '/agents/me/web-link', key);
  const token = new URL(body.url as string).searchParams.get('token')!;
  const response = await post('/inbox/sign-in', { token });
  expect(response.status).toBe(303);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

/** A new handoff from alice to bob (or `to`); its thread id. */
async function send(summary: string, from = alice, to = 'bob@acme'): Promise<string> {
  const created = await relay.rpc(from, 'message/send', {
    recipient: to,
    intent: 'inform',
    message: { parts: [{ text: summary }] },
  });
  expect(created.body.error).toBeUndefined();
  clock.advance(1_000);
  return created.body.result.task_id as string;
}

/** The thread ids a search page lists, in order. */
function listed(html: string): string[] {
  return [...html.matchAll(/<a class="title" href="\/inbox\/([0-9a-f-]{36})">/g)].map((m) => m[1]!);
}

async function search(cookie: string, words: string, list = 'received'): Promise<string[]> {
  const { status, html } = await get(`/inbox?list=${list}&q=${encodeURIComponent(words)}`, cookie);
  expect(status).toBe(200);
  return listed(html);
}

/** Waits for the worker to have written the thread's words (search lags the write by the job's time). */
function found(cookie: string, words: string, id: string, list = 'received'): Promise<string[]> {
  return waitUntil(
    async () => ((await search(cookie, words, list)).includes(id) ? search(cookie, words, list) : undefined),
    `"${words}" to find ${id}`,
  );
}

beforeAll(async () => {
  relay = await startTestRelay({ name: 'web_inbox_search', clock });
  alice = await relay.register({ handle: 'alice@acme', name: 'Alice' });
  bob = await relay.register({ handle: 'bob@acme', name: 'Bob' });
  carol = await relay.register({ handle: 'carol@acme', name: 'Carol' });
  [aliceCookie, bobCookie, carolCookie] = await Promise.all([signIn(alice), signIn(bob), signIn(carol)]);
});

afterAll(async () => {
  await relay?.stop();
});

test('a word of a summary finds the thread for its recipient and its sender, and never for anyone else', async () => {
  const id = await send('The invoices endpoint now pages with a cursor');
  const other = await send('Nothing about billing here');
  expect(await found(bobCookie, 'invoices', id)).toEqual([id]);
  expect(await found(aliceCookie, 'invoices', id, 'sent')).toEqual([id]);
  // Another person's thread is not theirs to search, in any list.
  for (const list of ['received', 'sent', 'waiting']) expect(await search(carolCookie, 'invoices', list)).toEqual([]);
  // A list's party holds: bob sent nothing.
  expect(await search(bobCookie, 'invoices', 'sent')).toEqual([]);
  expect(await found(bobCookie, 'billing', other)).toEqual([other]);
  // The page says what it searched and keeps the words in the box.
  const { html } = await get('/inbox?list=received&q=invoices', bobCookie);
  expect(html).toContain('Search results for “invoices”');
  expect(html).toContain('value="invoices"');
});

test('a word of a message added later finds the thread once its event is taken', async () => {
  const id = await send('Deploy window for the gateway');
  await found(bobCookie, 'gateway', id);
  expect(await search(bobCookie, 'rollback')).toEqual([]);
  const reply = await relay.rpc(bob, 'message/send', {
    task_id: id,
    // Its first word is the summary's already: the entries already there are skipped, the new ones written.
    message: { parts: [{ text: 'Gateway: is a rollback planned?' }] },
  });
  expect(reply.body.error).toBeUndefined();
  expect(await found(bobCookie, 'rollback', id)).toEqual([id]);
  expect(await found(aliceCookie, 'rollback', id, 'sent')).toEqual([id]);
});

test('case and accents do not matter, on either side', async () => {
  const id = await send('Le CAFÉ de Zoë sert des crêpes');
  expect(await found(bobCookie, 'cafe', id)).toEqual([id]);
  expect(await search(bobCookie, 'ZOE')).toEqual([id]);
  expect(await search(bobCookie, 'Crêpes')).toEqual([id]);
  expect(await search(bobCookie, 'crepe')).toEqual([]);
});

test('several words find only the threads holding every one, whatever their order', async () => {
  const both = await send('quartz migration plan');
  const one = await send('quartz only');
  await found(bobCookie, 'quartz', one);
  await found(bobCookie, 'quartz', both);
  expect(await search(bobCookie, 'quartz migration')).toEqual([both]);
  expect(await search(bobCookie, 'migration, QUARTZ!')).toEqual([both]);
  expect((await search(bobCookie, 'quartz')).sort()).toEqual([both, one].sort());
  expect(await search(bobCookie, 'quartz nowhere')).toEqual([]);
});

test('results come newest first, a page at a time; walking the cursor lists each once', async () => {
  const ids: string[] = [];
  for (let n = 0; n < 30; n += 1) ids.push(await send(`zeppelin note ${n}`));
  await found(bobCookie, 'zeppelin', ids[29]!);
  await waitUntil(async () => (await search(bobCookie, 'zeppelin')).length === 25, 'a full first page');
  const seen: string[] = [];
  let path: string | undefined = '/inbox?list=received&q=zeppelin';
  while (path) {
    const { html } = await get(path, bobCookie);
    seen.push(...listed(html));
    const next = /href="(\/inbox\?list=received&amp;q=zeppelin&amp;cursor=[^"]+)"/.exec(html)?.[1];
    path = next?.replace(/&amp;/g, '&');
  }
  expect(seen).toEqual([...ids].reverse());
  // The status chips still narrow a search: all of them are pending, none accepted.
  expect(listed((await get('/inbox?list=received&q=zeppelin&status=accepted', bobCookie)).html)).toEqual([]);
  expect(listed((await get('/inbox?list=received&q=zeppelin&status=pending', bobCookie)).html)).toHaveLength(25);
});

test('the intent and teammate filters narrow a search', async () => {
  const fromCarol = await send('walrus from carol', carol);
  const fromAlice = await send('walrus from alice');
  await found(bobCookie, 'walrus', fromCarol);
  await found(bobCookie, 'walrus', fromAlice);
  expect(listed((await get('/inbox?list=received&q=walrus&with=carol@acme', bobCookie)).html)).toEqual([fromCarol]);
  expect(listed((await get('/inbox?list=received&q=walrus&intent=ask_question', bobCookie)).html)).toEqual([]);
});

test('a search without a word is refused in words', async () => {
  const { status, html } = await get('/inbox?list=received&q=%21%21%20-', bobCookie);
  expect(status).toBe(400);
  expect(html).toContain('Type a word of at least 2 letters or digits');
});

test('a purged thread is found no more, and its words are gone', async () => {
  const id = await send('ephemeral secret plan');
  await found(bobCookie, 'ephemeral', id);
  expect(await relay.store.text.docs.countDocuments({ _id: id })).toBe(1);
  expect(await purgeThread(relay.store, id)).toBe(true);
  expect(await search(bobCookie, 'ephemeral')).toEqual([]);
  expect(await search(aliceCookie, 'ephemeral', 'sent')).toEqual([]);
  expect(await relay.store.text.docs.countDocuments({ _id: id })).toBe(0);
  expect(await purgeThread(relay.store, id)).toBe(false);
});

test('the layout-9 migration writes the words of threads written before the text index, once, and resumes', async () => {
  const first = await send('platypus written before');
  const second = await send('platypus also before', carol);
  await found(bobCookie, 'platypus', first);
  await found(bobCookie, 'platypus', second);
  const reply = await relay.rpc(bob, 'message/send', { task_id: first, message: { parts: [{ text: 'echidna too' }] } });
  expect(reply.body.error).toBeUndefined();
  await found(bobCookie, 'echidna', first);
  const entries = await relay.store.text.docs.countDocuments({});
  // As a layout-8 database: its words per participant in `thread_terms`, none under the text index, and a migration
  // stopped after the first thread.
  await relay.store.text.docs.deleteMany({});
  await relay.store.db.collection('thread_terms').insertOne({ _id: 'x|bob@acme|platypus' } as never);
  await relay.store.meta.updateOne({ _id: 'schema' }, { $set: { value: 8 } });
  const [earliest] = await relay.store.threads.find({}).sort({ _id: 1 }).limit(1).toArray();
  await relay.store.meta.insertOne({ _id: 'thread_text_filled_through', value: earliest!._id, at: new Date() });
  expect(await search(bobCookie, 'platypus')).toEqual([]);
  const lines: string[] = [];
  const threads = await relay.store.threads.countDocuments({});
  expect(await migrateStore(relay.store, (line) => lines.push(line))).toBe(threads - 1);
  expect(lines.join('\n')).toContain('written for the inbox search');
  expect(await schemaVersion(relay.store)).toBe(SCHEMA_VERSION);
  expect(await relay.store.db.listCollections({ name: 'thread_terms' }).toArray()).toEqual([]);
  // The thread before the marker was taken as done (its words are written again below).
  const skipped = (id: string) => id !== earliest!._id;
  expect((await search(bobCookie, 'platypus')).sort()).toEqual([first, second].filter(skipped).sort());
  expect(await search(bobCookie, 'echidna')).toEqual([first].filter(skipped));
  // Run whole again: one document per thread, none twice (the one skipped above is the only difference).
  await relay.store.meta.updateOne({ _id: 'schema' }, { $set: { value: 8 } });
  await migrateStore(relay.store, () => {});
  expect(await relay.store.text.docs.countDocuments({})).toBe(entries);
  expect(await search(bobCookie, 'echidna')).toEqual([first]);
  await migrateStore(relay.store, () => {});
  expect(await relay.store.text.docs.countDocuments({})).toBe(entries);
});
