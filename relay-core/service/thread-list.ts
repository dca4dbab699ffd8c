// Listing a teammate's threads: one page, newest first, with unread counts and a cursor that resumes exactly.
import type { Filter } from 'mongodb';
import type { AgentDoc, ThreadDoc } from '../domain/documents';
import type { ThreadStatus } from '../domain/schemas';
import type { MongoStore } from '../store/mongo-store';
import type { Teammates } from './teammates';
import { decodeCursor, encodeCursor, listItem, type ListItem } from './wire-views';

export interface ListRequest {
  role: 'recipient' | 'sender';
  status?: ThreadStatus[];
  since?: Date;
  limit: number;
  cursor?: string;
}

export interface ThreadPage {
  items: ListItem[];
  next_cursor: string | null;
}

/** A page of the caller's threads, newest first; the cursor continues exactly where the page ended. */
export async function listThreads(deps: { store: MongoStore; teammates: Teammates }, caller: AgentDoc, request: ListRequest): Promise<ThreadPage> {
  const party = request.role === 'recipient' ? 'to' : 'from';
  const query: Filter<ThreadDoc> = { [party]: caller.handle };
  if (request.status?.length) query.status = { $in: request.status };
  const after = request.cursor ? decodeCursor(request.cursor) : undefined;
  const createdAt: Record<string, Date> = {};
  if (request.since) createdAt.$gte = request.since;
  if (after) {
    createdAt.$lte = after.created_at;
    query.$or = [{ created_at: { $lt: after.created_at } }, { created_at: after.created_at, _id: { $lt: after.id } }];
  }
  if (Object.keys(createdAt).length) query.created_at = createdAt;
  const docs = await deps.store.threads
    .find(query, {
      projection: { _id: 1, from: 1, to: 1, summary: 1, intent: 1, status: 1, message_counts: 1, created_at: 1, updated_at: 1 },
    })
    .sort({ created_at: -1, _id: -1 })
    .limit(request.limit + 1)
    .toArray();
  const page = docs.slice(0, request.limit);
  const reads = page.length
    ? await deps.store.threadReads.find({ _id: { $in: page.map((d) => `${d._id}:${caller.handle}`) } }).toArray()
    : [];
  const seen = new Map(reads.map((r) => [r._id.slice(0, r._id.lastIndexOf(':')), r.seen]));
  const handles = [...new Set(page.flatMap((d) => [d.from, d.to]))];
  const agents = new Map(await Promise.all(handles.map(async (h) => [h, await deps.teammates.get(h)] as const)));
  const items = page.map((d) => {
    const fromOther = d.message_counts[party === 'to' ? 'from' : 'to'];
    return listItem(d, agents, Math.max(0, fromOther - (seen.get(d._id) ?? 0)));
  });
  const last = page[page.length - 1];
  return { items, next_cursor: docs.length > request.limit && last ? encodeCursor(last) : null };
}
