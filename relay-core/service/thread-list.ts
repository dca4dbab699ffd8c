// Listing a teammate's threads: one page, newest first, with unread counts and a cursor that resumes exactly
// (the page itself is one or two indexed queries: store/thread-lists.ts; what each reader has seen is on its threads).
import type { AgentDoc } from '../domain/documents';
import type { Intent, ThreadStatus } from '../domain/schemas';
import { seenBy } from '../store/read-marks';
import type { ThreadLists } from '../store/thread-lists';
import type { Teammates } from './teammates';
import { listItem, type ListItem } from './wire-views';

export interface ListRequest {
  role: 'recipient' | 'sender';
  status?: ThreadStatus[];
  since?: Date;
  limit: number;
  cursor?: string;
  /** Oldest first (the web inbox's "Waiting for me"); newest first otherwise. */
  oldestFirst?: boolean;
  /** The web inbox's filters, each or both (store/thread-lists.ts): an intent, the teammate on the other side. */
  intent?: Intent;
  other?: string;
}

export interface ThreadPage {
  items: ListItem[];
  next_cursor: string | null;
}

/** A page of the caller's threads, newest first; the cursor continues exactly where the page ended. */
export async function listThreads(
  deps: { lists: Pick<ThreadLists, 'page'>; teammates: Pick<Teammates, 'get'> },
  caller: AgentDoc,
  request: ListRequest,
): Promise<ThreadPage> {
  const party = request.role === 'recipient' ? 'to' : 'from';
  const { threads: listed, next_cursor } = await deps.lists.page({
    party,
    handle: caller.handle,
    limit: request.limit,
    ...(request.status?.length ? { statuses: request.status } : {}),
    ...(request.since ? { since: request.since } : {}),
    ...(request.cursor ? { cursor: request.cursor } : {}),
    ...(request.oldestFirst ? { oldestFirst: true } : {}),
    ...(request.intent ? { intent: request.intent } : {}),
    ...(request.other ? { other: request.other } : {}),
  });
  // A create held for approval (or rejected before it was approved) is not in its recipient's inbox.
  const page = party === 'to' ? listed.filter((d) => !d.hidden_from_recipient || d.from === caller.handle) : listed;
  const other = party === 'to' ? 'from' : 'to';
  const handles = [...new Set(page.flatMap((d) => [d.from, d.to]))];
  const agents = new Map(await Promise.all(handles.map(async (h) => [h, await deps.teammates.get(h)] as const)));
  const items = page.map((d) => listItem(d, agents, Math.max(0, d.message_counts[other] - seenBy(d, caller.handle))));
  return { items, next_cursor };
}
