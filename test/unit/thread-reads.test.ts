// Reading threads (relay-core/service/thread-reads.ts) on the in-memory threads, list pages and read markers: a thread
// is shown to its participants (and the candidates of an unclaimed one), with its messages in order and, for its
// recipient, the handoff token; reading it marks the other side's messages read once; anyone else is refused, and a
// create held for approval does not exist for its recipient; a signed inbox link opens the thread for its viewer only;
// counts and the A2A task list see what the caller may see. The same over JSON-RPC, MCP, the inbox page and the web
// inbox: test/integration/.
import type { AgentDoc, MessageDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { HandoffTokens } from '../../relay-core/service/handoff-tokens';
import { InboxLinks } from '../../relay-core/service/inbox-links';
import { ThreadReads } from '../../relay-core/service/thread-reads';
import type { DraftDoc } from '../../relay-core/store/a2a-drafts';
import { InMemoryReadMarks } from '../fakes/in-memory-read-marks';
import { InMemoryThreadLists } from '../fakes/in-memory-thread-lists';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, storedPending, storedUnclaimed, teammatesOf } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const sam = agent('sam@acme');
const rita = agent('rita@acme');
const fay = agent('fay@acme');
const eve = agent('eve@acme');
const lead = agent('lead@acme');
const minute = (n: number) => new Date(NOW.getTime() + n * 60_000);

function setup(drafts: DraftDoc[] = []) {
  const threads = new InMemoryThreads();
  const marks = new InMemoryReadMarks(threads);
  const tokens = new HandoffTokens('fast-tier-secret');
  const links = new InboxLinks('https://relay.test', 'fast-tier-secret');
  const searched: unknown[] = [];
  const reads = new ThreadReads({
    store: {
      readThread: (id) => threads.readThread(id),
      messagesOf: (doc, seqs) => threads.messagesOf(doc, seqs),
      lists: new InMemoryThreadLists(threads),
      // The A2A tasks still waiting for a recipient, scripted: those of the statuses asked, past the cursor (DraftStore's
      // own paging: test/integration/a2a-list-tasks.test.ts).
      drafts: {
        page: async (query) => {
          const matching = drafts.filter((d) => d.from === query.from && query.statuses.some((s) => s === d.status));
          const after = query.after;
          const page = matching.filter(
            (d) => !after || d.created_at < after.after || (+d.created_at === +after.after && d._id < after.id),
          );
          return { drafts: page.slice(0, query.limit), total: matching.length };
        },
      },
    },
    marks,
    search: async (caller, request) => {
      searched.push([caller.handle, request.text]);
      return { items: [], next_cursor: null };
    },
    teammates: teammatesOf([sam, rita, fay, eve, lead]),
    links,
    tokens,
  });
  /** A pending handoff from Sam to Rita, changed by `over`, with Sam's messages 1..`messages`. */
  const pending = async (over: Partial<ThreadDoc> = {}, messages = 0) => {
    const doc = await storedPending(threads, tokens, sam, rita);
    const changed = { ...doc, ...over, message_seq: messages, message_counts: { from: messages, to: 0 } };
    await threads.writeThread(doc._id, () => changed);
    for (let n = 1; n <= messages; n += 1) await threads.insertMessage(message(doc._id, n));
    return (await threads.readThread(doc._id))!;
  };
  return { threads, marks, tokens, links, reads, pending, searched };
}

const message = (threadId: string, n: number): MessageDoc => ({
  _id: `${threadId}:${n}`,
  id: `m${n}`,
  thread_id: threadId,
  sequence_no: n,
  from: sam.handle,
  body: `note ${n}`,
  payload: {},
  artifacts: [],
  via: 'api',
  created_at: minute(n),
});

describe('one thread', () => {
  test('its recipient reads it whole: messages in order, the handoff token, a link signed for them', async () => {
    const { reads, pending, tokens, links } = setup();
    const doc = await pending({}, 2);
    const view = await reads.threadViewFor(rita, doc._id);
    expect(view).toMatchObject({
      thread_id: doc._id,
      status: 'pending',
      sender: { handle: sam.handle },
      recipient: { handle: rita.handle },
      inbox_url: links.url(doc._id, rita.handle),
      handoff_token: tokens.derive(doc._id, doc.handoff_token!.nonce),
      handoff_token_expires_at: doc.handoff_token!.expires_at.toISOString(),
    });
    expect(view.messages.map((m) => m.body)).toEqual(['note 1', 'note 2']);
  });

  test('its sender reads it without the handoff token', async () => {
    const { reads, pending, links } = setup();
    const doc = await pending();
    const view = await reads.threadViewFor(sam, doc._id);
    expect(view.inbox_url).toBe(links.url(doc._id, sam.handle));
    expect(view.handoff_token).toBeUndefined();
  });

  test("reading marks the other side's messages read, once: a re-read with nothing new writes nothing", async () => {
    const { reads, pending, marks, threads } = setup();
    const doc = await pending({}, 2);
    await reads.threadViewFor(rita, doc._id);
    await reads.threadViewFor(rita, doc._id);
    expect(await marks.seen(rita.handle, [doc._id])).toEqual(new Map([[doc._id, 2]]));
    expect(marks.writes).toBe(1);
    await threads.insertMessage(message(doc._id, 3));
    await threads.writeThread(doc._id, (d) => ({ ...d, message_seq: 3, message_counts: { from: 3, to: 0 } }));
    await reads.threadViewFor(rita, doc._id);
    expect(await marks.seen(rita.handle, [doc._id])).toEqual(new Map([[doc._id, 3]]));
    expect(marks.writes).toBe(2);
  });

  test('a candidate of an unclaimed handoff reads it; a teammate who is not one is refused', async () => {
    const { reads, threads, tokens } = setup();
    const doc = await storedUnclaimed(
      threads,
      tokens,
      sam,
      { kind: 'role', value: 'frontend', label: 'role:frontend' },
      [rita.handle, fay.handle],
    );
    expect((await reads.threadViewFor(fay, doc._id)).status).toBe('unclaimed');
    await expect(reads.threadViewFor(eve, doc._id)).rejects.toMatchObject({ code: 'not_a_participant' });
  });

  test.each([
    ['readThread', (r: ThreadReads, caller: AgentDoc, id: string) => r.readThread(caller, id)],
    ['threadViewFor', (r: ThreadReads, caller: AgentDoc, id: string) => r.threadViewFor(caller, id)],
  ])('%s: a stranger is refused, an unknown thread is not found; nothing is marked read', async (_m, read) => {
    const { reads, pending, marks } = setup();
    const doc = await pending({}, 1);
    await expect(read(reads, eve, doc._id)).rejects.toMatchObject({
      code: 'not_a_participant',
      message: `eve@acme is not a participant of thread ${doc._id}`,
    });
    const unknown = '00000000-0000-4000-8000-000000000000';
    await expect(read(reads, rita, unknown)).rejects.toMatchObject({
      code: 'thread_not_found',
      message: `No thread ${unknown}`,
    });
    expect(marks.writes).toBe(0);
  });

  test('a create held for approval does not exist for its recipient; its sender reads it', async () => {
    const { reads, pending } = setup();
    const doc = await pending({ status: 'awaiting_approval', hidden_from_recipient: true });
    await expect(reads.threadViewFor(rita, doc._id)).rejects.toMatchObject({
      code: 'thread_not_found',
      message: `No thread ${doc._id}`,
    });
    await expect(reads.readThread(rita, doc._id)).rejects.toMatchObject({ code: 'thread_not_found' });
    expect((await reads.readThread(sam, doc._id)).status).toBe('awaiting_approval');
  });
});

describe('a signed inbox link', () => {
  const sigOf = (url: string) => new URL(url).searchParams.get('sig')!;

  test('opens the thread for the participant it was signed for', async () => {
    const { reads, pending, links } = setup();
    const doc = await pending({}, 1);
    const opened = await reads.threadForInboxLink(doc._id, rita.handle, sigOf(links.url(doc._id, rita.handle)));
    expect(opened).toMatchObject({ viewer: rita.handle, view: { thread_id: doc._id, messages: [{ body: 'note 1' }] } });
  });

  test('opens nothing when forged, signed for someone else, or signed for a teammate not in the thread', async () => {
    const { reads, pending, links } = setup();
    const doc = await pending();
    const ritas = sigOf(links.url(doc._id, rita.handle));
    expect(await reads.threadForInboxLink(doc._id, rita.handle, 'forged')).toBeNull();
    expect(await reads.threadForInboxLink(doc._id, eve.handle, ritas)).toBeNull();
    // Eve's own signature is genuine, but she takes no part in the thread.
    expect(await reads.threadForInboxLink(doc._id, eve.handle, sigOf(links.url(doc._id, eve.handle)))).toBeNull();
  });

  test('opens it for the lead it was escalated to; not for its recipient while the create is held', async () => {
    const { reads, pending, links } = setup();
    const escalated = await pending({ timers: { fired: {}, escalated_to: { kind: 'lead', handle: lead.handle } } });
    const forLead = sigOf(links.url(escalated._id, lead.handle));
    expect(await reads.threadForInboxLink(escalated._id, lead.handle, forLead)).toMatchObject({ viewer: lead.handle });
    const held = await pending({ status: 'awaiting_approval', hidden_from_recipient: true });
    expect(await reads.threadForInboxLink(held._id, rita.handle, sigOf(links.url(held._id, rita.handle)))).toBeNull();
  });
});

describe('counts and lists', () => {
  test('a count of received threads leaves out held creates and stops at its limit', async () => {
    const { reads, threads } = setup();
    for (let n = 0; n < 3; n += 1) await threads.insert(threadDocAt(sam.handle, rita.handle, 'pending', minute(n)));
    await threads.insert({
      ...threadDocAt(sam.handle, rita.handle, 'awaiting_approval', minute(5)),
      hidden_from_recipient: true,
    });
    expect(await reads.countThreads(rita, 'to', ['pending', 'awaiting_approval'], 99)).toBe(3);
    expect(await reads.countThreads(rita, 'to', undefined, 2)).toBe(2);
    expect(await reads.countThreads(sam, 'from', undefined, 99)).toBe(4);
  });

  test('the A2A task list: sent and received threads as whole views, newest first, marking nothing read', async () => {
    const { reads, pending, threads, marks } = setup();
    const received = await pending({ created_at: minute(1) }, 1);
    const sent = { ...threadDocAt(rita.handle, fay.handle, 'accepted', minute(2)) };
    await threads.insert(sent);
    await threads.insert(threadDocAt(sam.handle, fay.handle, 'pending', minute(3)));
    const page = await reads.listVisibleTasks(rita, { limit: 10, draftStatuses: [] });
    expect(page.total).toBe(2);
    expect(page.next_cursor).toBeNull();
    expect(page.items.map((i) => ('view' in i ? [i.view.thread_id, i.view.messages.length] : null))).toEqual([
      [sent._id, 0],
      [received._id, 1],
    ]);
    expect(marks.writes).toBe(0);
  });

  test("the caller's A2A tasks still waiting for a recipient are merged in by age, under one cursor", async () => {
    const draft = {
      _id: '11111111-1111-4111-8111-111111111111',
      from: rita.handle,
      key: 'k',
      message_id: 'm',
      summary: 'Who should review this?',
      artifacts: [],
      metadata: {},
      status: 'input_required',
      created_at: minute(5),
      updated_at: minute(5),
    } satisfies DraftDoc;
    const { reads, pending } = setup([draft]);
    const older = await pending({ created_at: minute(1) });
    const newer = await pending({ created_at: minute(9) });
    const first = await reads.listVisibleTasks(rita, { limit: 2, draftStatuses: ['input_required'] });
    expect(first.total).toBe(3);
    expect(first.items.map((i) => ('view' in i ? i.view.thread_id : i.draft._id))).toEqual([newer._id, draft._id]);
    expect(first.next_cursor).not.toBeNull();
    const rest = await reads.listVisibleTasks(rita, {
      limit: 2,
      draftStatuses: ['input_required'],
      cursor: first.next_cursor!,
    });
    expect(rest.items.map((i) => ('view' in i ? i.view.thread_id : i.draft._id))).toEqual([older._id]);
  });

  test('search is the text search the relay was built with, asked as the caller', async () => {
    const { reads, searched } = setup();
    await reads.searchThreads(rita, { text: 'release notes', limit: 10 } as Parameters<
      ThreadReads['searchThreads']
    >[1]);
    expect(searched).toEqual([[rita.handle, 'release notes']]);
  });
});
