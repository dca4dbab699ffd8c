// The web inbox's text search: the caller's threads that hold every word typed, newest first, as list items with
// unread counts (store/thread-text.ts reads them; service/thread-search-index.ts writes the words).
import type { AgentDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { Intent, ThreadStatus } from '../domain/schemas';
import { MAX_QUERY_TERMS, MIN_TERM_LENGTH, searchTerms } from '../domain/search-terms';
import type { ReadMarks } from '../store/read-marks';
import type { ThreadText } from '../store/thread-text';
import type { Party } from '../store/thread-lists';
import type { Teammates } from './teammates';
import type { ThreadPage } from './thread-list';
import { listItem } from './wire-views';

export interface SearchRequest {
  /** What was typed: its words (domain/search-terms.ts), every one of them in a thread for it to match. */
  text: string;
  limit: number;
  cursor?: string;
  /** Only received (`to`) or only sent (`from`) threads; both without. */
  party?: Party;
  status?: readonly ThreadStatus[];
  intent?: Intent;
  other?: string;
}

export async function searchThreads(
  deps: { text: Pick<ThreadText, 'search'>; readMarks: ReadMarks; teammates: Pick<Teammates, 'get'> },
  caller: AgentDoc,
  request: SearchRequest,
): Promise<ThreadPage> {
  const terms = searchTerms(request.text);
  if (terms.length === 0)
    throw new RelayError(
      'invalid_params',
      `search: type a word of at least ${MIN_TERM_LENGTH} letters or digits (punctuation alone finds nothing)`,
    );
  if (terms.length > MAX_QUERY_TERMS)
    throw new RelayError('invalid_params', `search: at most ${MAX_QUERY_TERMS} words at once`);
  const { threads, next_cursor } = await deps.text.search({
    handle: caller.handle,
    terms,
    limit: request.limit,
    ...(request.cursor ? { cursor: request.cursor } : {}),
    ...(request.party ? { party: request.party } : {}),
    ...(request.status?.length ? { statuses: request.status } : {}),
    ...(request.intent ? { intent: request.intent } : {}),
    ...(request.other ? { other: request.other } : {}),
  });
  // Unread: the other side's messages past what the caller has seen (one read for the page), as in the lists.
  const otherSide = (d: (typeof threads)[number]) => (d.from === caller.handle ? 'to' : 'from');
  const seen = await deps.readMarks.seen(
    caller.handle,
    threads.filter((d) => d.message_counts[otherSide(d)] > 0).map((d) => d._id),
  );
  const handles = [...new Set(threads.flatMap((d) => [d.from, d.to]))];
  const agents = new Map(await Promise.all(handles.map(async (h) => [h, await deps.teammates.get(h)] as const)));
  const items = threads.map((d) =>
    listItem(d, agents, Math.max(0, d.message_counts[otherSide(d)] - (seen.get(d._id) ?? 0))),
  );
  return { items, next_cursor };
}
