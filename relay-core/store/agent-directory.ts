// agents/list for servers that read every agent to answer `{ role }` or `{ skills }`: the active cards held in
// memory and kept current from a log of card changes addressed by `_id`, so a change costs each process one card's
// read, not the whole team's.
import type { Collection } from 'mongodb';
import type { AgentDoc, MetaDoc } from '../domain/documents';
import { KeyedQueue } from './keyed-queue';
import { isDuplicateKey, putById } from './thread-writes';

/**
 * The fields of a teammate's public card (service/teammates.ts publicCard), the one list both agents/list paths read:
 * the directory's copy here and MongoDB's indexed query (PUBLIC_CARD_PROJECTION), so neither can drop one.
 */
export const PUBLIC_CARD_FIELDS = ['handle', 'name', 'role', 'skills', 'repos_owned', 'lead'] as const;
export type PublicCardField = (typeof PUBLIC_CARD_FIELDS)[number];
export const PUBLIC_CARD_PROJECTION = Object.fromEntries(PUBLIC_CARD_FIELDS.map((field) => [field, 1])) as Record<PublicCardField, 1>;

export type DirectoryCard = Pick<AgentDoc, '_id' | PublicCardField>;

/** Entry n of the change log is the `meta` document `agents_log#<n>`, its value the handle whose card changed. */
const LOG_PREFIX = 'agents_log#';
/** A hint at the log's last position (at most it), rewritten by every append. */
const HEAD_ID = 'agents_log_head';
/** The entry of a bulk write of teammates (seeding, a migration): every process reloads every card. Never a handle. */
const EVERYONE = '*';
/** Changes behind which a process reloads every card instead of re-reading each changed one. */
const CATCH_UP_LIMIT = 200;

const CARD_FIELDS = { _id: 1, ...PUBLIC_CARD_PROJECTION, status: 1, 'notification.disabled_at': 1 } as const;
export type CardDoc = DirectoryCard & Pick<AgentDoc, 'status'> & { notification?: { disabled_at?: Date | null } | null };

export function logEntryId(position: number): string {
  return `${LOG_PREFIX}${position}`;
}

/**
 * The log: every card write appends the handle at the next position, inserting it with a unique `_id` (atomic on
 * every server); a duplicate means another process took that position, so it takes the next. A process appends one
 * change at a time and only above positions it saw filled, so the filled positions are always 1 … head, with no gap:
 * a reader that finds position n+1 missing has seen every change logged before it looked.
 *
 * Staleness bound: none beyond one call. A writer appends after its card write; a call reads the log from the
 * position its copy was built at, then re-reads the changed cards, all after the call began. Calls made together
 * share a pass only if it started after each of them began (FreshReads), so the bound holds for each.
 */
/** What the active cards name, each once (Teammates.vocabulary). */
export interface Vocabulary {
  roles: string[];
  skills: string[];
  repos_owned: string[];
}

export interface CardFilter {
  role?: string;
  skill?: string;
  repo?: string;
}

export interface Loaded {
  cards: DirectoryCard[];
  /** Active teammates whose webhook endpoint is set and not disabled. */
  endpoints: Set<string>;
  byRole: Map<string, DirectoryCard[]>;
  bySkill: Map<string, DirectoryCard[]>;
  /** Every (repo, card) pair, sorted by repo: an exact repo or a prefix is a binary-searched range. */
  repos: Array<{ repo: string; card: DirectoryCard }>;
}

interface Copy {
  /** The log position this copy holds every change up to. */
  seen: number;
  docs: Map<string, CardDoc>;
  loaded: Loaded;
}

export class AgentDirectory {
  private copy: Copy | undefined;
  private readonly passes = new FreshReads(() => this.sync());
  private readonly appends = new KeyedQueue();
  /** The highest log position this process saw filled. */
  private known = 0;

  constructor(
    private readonly agents: Collection<AgentDoc>,
    private readonly meta: Collection<MetaDoc>,
    private readonly catchUpLimit = CATCH_UP_LIMIT,
  ) {}

  /**
   * Call after every write of a teammate's document (store.writeAgent does) and after registering one; without a
   * handle after writing many at once, which makes every process reload every card.
   */
  changed(handle: string = EVERYONE): Promise<void> {
    return this.appends.run('log', () => this.append(handle));
  }

  /** Every active card, sorted by handle. */
  async cards(): Promise<readonly DirectoryCard[]> {
    return (await this.passes.read()).cards;
  }

  /**
   * The cards matching `filter` (matchesCardFilter), sorted by handle, at most `limit`: looked up in the role,
   * skill or repo index, so a call costs what it returns, not the size of the team.
   */
  async matching(filter: CardFilter, limit: number): Promise<DirectoryCard[]> {
    const loaded = await this.passes.read();
    // Each index lists cards by handle except the repo range (by repo, and a card once per repo it owns there).
    const candidates: DirectoryCard[][] = [loaded.cards];
    if (filter.role !== undefined) candidates.push(loaded.byRole.get(filter.role) ?? []);
    if (filter.skill !== undefined) candidates.push(loaded.bySkill.get(filter.skill) ?? []);
    if (filter.repo !== undefined) candidates.push([...new Set(repoRange(loaded.repos, filter.repo))].sort(byHandle));
    const fewest = candidates.reduce((a, b) => (b.length < a.length ? b : a));
    const found: DirectoryCard[] = [];
    for (const card of fewest) {
      if (found.length === limit) break;
      if (matchesCardFilter(card, filter)) found.push(card);
    }
    return found;
  }

  /** The roles, skills and owned repos of the active cards, each once. */
  async vocabulary(): Promise<Vocabulary> {
    const loaded = await this.passes.read();
    return { roles: [...loaded.byRole.keys()], skills: [...loaded.bySkill.keys()], repos_owned: [...new Set(loaded.repos.map((r) => r.repo))] };
  }

  /** Those of `handles` that have a webhook endpoint to deliver to (one log read while nothing changed). */
  async withEndpoint(handles: readonly string[]): Promise<string[]> {
    const { endpoints } = await this.passes.read();
    return handles.filter((handle) => endpoints.has(handle));
  }

  private async append(handle: string): Promise<void> {
    let position = (this.known || (await this.hint())) + 1;
    for (;;) {
      try {
        await this.meta.insertOne({ _id: logEntryId(position), value: handle, at: new Date() });
        break;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        position += 1;
      }
    }
    this.known = Math.max(this.known, position);
    await putById(this.meta, HEAD_ID, { value: position, at: new Date() });
  }

  /** One pass: the copy brought up to the log's head (one `_id` read when nothing changed). */
  private async sync(): Promise<Loaded> {
    const copy = this.copy;
    if (!copy) return this.reload();
    const first = await this.entry(copy.seen + 1);
    if (first === null) return copy.loaded;
    // Positions up to the hint are all filled: read them at once, then the few a writer may have added above it.
    const hint = await this.hint();
    if (hint - copy.seen > this.catchUpLimit) return this.reload();
    const changed = new Set([first]);
    const between = await Promise.all(range(copy.seen + 2, hint).map((position) => this.entry(position)));
    for (const handle of between) if (handle !== null) changed.add(handle);
    let seen = Math.max(copy.seen + 1, hint);
    for (let next = await this.entry(seen + 1); next !== null; next = await this.entry(seen + 1)) {
      changed.add(next);
      seen += 1;
      if (seen - copy.seen > this.catchUpLimit) return this.reload();
    }
    if (changed.has(EVERYONE)) return this.reload();
    const handles = [...changed];
    const docs = await Promise.all(handles.map((handle) => this.agents.findOne({ _id: handle }, { projection: CARD_FIELDS }) as Promise<CardDoc | null>));
    const changes = handles.map((handle, i): CardChange => {
      const before = copy.docs.get(handle);
      const after = docs[i] ?? undefined;
      if (after) copy.docs.set(handle, after);
      else copy.docs.delete(handle);
      return { before, after };
    });
    this.copy = { seen, docs: copy.docs, loaded: patch(copy.loaded, changes) };
    this.known = Math.max(this.known, seen);
    return this.copy.loaded;
  }

  /** Every card, read after finding the log's head (so a change logged above it is caught up on next). */
  private async reload(): Promise<Loaded> {
    let seen = Math.max(this.known, await this.hint());
    while ((await this.entry(seen + 1)) !== null) seen += 1;
    const docs = (await this.agents.find({}, { projection: CARD_FIELDS }).toArray()) as CardDoc[];
    const byId = new Map(docs.map((doc) => [doc._id, doc]));
    this.copy = { seen, docs: byId, loaded: build(byId) };
    this.known = Math.max(this.known, seen);
    return this.copy.loaded;
  }

  private async entry(position: number): Promise<string | null> {
    return ((await this.meta.findOne({ _id: logEntryId(position) }))?.value as string | undefined) ?? null;
  }

  private async hint(): Promise<number> {
    const value = (await this.meta.findOne({ _id: HEAD_ID }))?.value;
    return typeof value === 'number' ? value : 0;
  }
}

/** The card a directory lists for `doc`: an active teammate's public fields. */
function cardOf(doc: CardDoc | undefined): DirectoryCard | undefined {
  if (doc?.status !== 'active') return undefined;
  const { status: _s, notification: _n, ...card } = doc;
  return card;
}

function hasEndpoint(doc: CardDoc | undefined): boolean {
  return doc?.status === 'active' && Boolean(doc.notification) && !doc.notification!.disabled_at;
}

/** Every index built from every card (a fresh copy, a reload). */
export function build(docs: ReadonlyMap<string, CardDoc>): Loaded {
  const active = [...docs.values()].filter((doc) => doc.status === 'active');
  const cards = active.map((doc) => cardOf(doc)!).sort(byHandle);
  const endpoints = new Set(active.filter(hasEndpoint).map((doc) => doc._id));
  const byRole = new Map<string, DirectoryCard[]>();
  const bySkill = new Map<string, DirectoryCard[]>();
  const repos: Loaded['repos'] = [];
  for (const card of cards) {
    push(byRole, card.role, card);
    for (const skill of new Set(card.skills)) push(bySkill, skill, card);
    for (const repo of new Set(card.repos_owned)) repos.push({ repo, card });
  }
  repos.sort(byRepo);
  return { cards, endpoints, byRole, bySkill, repos };
}

/** One teammate's document as the copy had it and as it is now (undefined: none). */
export interface CardChange {
  before: CardDoc | undefined;
  after: CardDoc | undefined;
}

/**
 * `loaded` with `changes` applied, as build would make it from the changed documents, at the cost of the changed
 * cards (a binary search and one array copy each), not of the team: rebuilding every index for each changed card
 * had cost each process 16 ms of CPU per change with 10,000 teammates. What the changes do not touch is shared
 * with `loaded`, which stays as it was (a caller may still be reading it).
 */
export function patch(loaded: Loaded, changes: readonly CardChange[]): Loaded {
  const cards = loaded.cards.slice();
  const repos = loaded.repos.slice();
  const byRole = new Map(loaded.byRole);
  const bySkill = new Map(loaded.bySkill);
  let endpoints = loaded.endpoints;
  for (const { before, after } of changes) {
    const old = cardOf(before);
    const now = cardOf(after);
    if (old) {
      removeSorted(cards, old, byHandle);
      updateList(byRole, old.role, (list) => removeSorted(list, old, byHandle));
      for (const skill of new Set(old.skills)) updateList(bySkill, skill, (list) => removeSorted(list, old, byHandle));
      for (const repo of new Set(old.repos_owned)) removeSorted(repos, { repo, card: old }, byRepo);
    }
    if (now) {
      insertSorted(cards, now, byHandle);
      updateList(byRole, now.role, (list) => insertSorted(list, now, byHandle));
      for (const skill of new Set(now.skills)) updateList(bySkill, skill, (list) => insertSorted(list, now, byHandle));
      for (const repo of new Set(now.repos_owned)) insertSorted(repos, { repo, card: now }, byRepo);
    }
    const id = (after ?? before)?._id;
    if (id !== undefined && hasEndpoint(before) !== hasEndpoint(after)) {
      if (endpoints === loaded.endpoints) endpoints = new Set(endpoints);
      if (hasEndpoint(after)) endpoints.add(id);
      else endpoints.delete(id);
    }
  }
  return { cards, endpoints, byRole, bySkill, repos };
}

/** Index of the first element of sorted `list` not below `item`. */
function lowerBound<T>(list: readonly T[], item: T, order: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (order(list[mid]!, item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted<T>(list: T[], item: T, order: (a: T, b: T) => number): void {
  const at = lowerBound(list, item, order);
  if (at < list.length && order(list[at]!, item) === 0) list[at] = item;
  else list.splice(at, 0, item);
}

function removeSorted<T>(list: T[], item: T, order: (a: T, b: T) => number): void {
  const at = lowerBound(list, item, order);
  if (at < list.length && order(list[at]!, item) === 0) list.splice(at, 1);
}

/** Replaces the list at `key` by a changed copy (the old list may still be read), dropping it once empty. */
function updateList<K, V>(map: Map<K, V[]>, key: K, change: (list: V[]) => void): void {
  const list = (map.get(key) ?? []).slice();
  change(list);
  if (list.length > 0) map.set(key, list);
  else map.delete(key);
}

/** from … to, inclusive (empty when from > to). */
function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}

/**
 * Reads shared without going stale: a call while no read is out sends one; calls while one is out wait for it and
 * share the next, sent once it is back (so after each of them began). Under load (the webhooks worker looks
 * endpoints up for several events at once) that is at most two reads out, however many callers, and never two at
 * once.
 */
export class FreshReads<T> {
  private out: Promise<T> | undefined;
  private next: Promise<T> | undefined;

  constructor(private readonly readNow: () => Promise<T>) {}

  read(): Promise<T> {
    if (!this.out) {
      const out = this.readNow().finally(() => {
        if (this.out === out) this.out = undefined;
      });
      this.out = out;
      return out;
    }
    this.next ??= this.out.then(
      () => this.sendNext(),
      () => this.sendNext(),
    );
    return this.next;
  }

  private sendNext(): Promise<T> {
    this.next = undefined;
    return this.read();
  }
}

function byHandle(a: DirectoryCard, b: DirectoryCard): number {
  return a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
}

function byRepo(a: Loaded['repos'][number], b: Loaded['repos'][number]): number {
  return a.repo < b.repo ? -1 : a.repo > b.repo ? 1 : byHandle(a.card, b.card);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The cards owning exactly `repo`, or, for a repo ending in `/`, any repo below it. */
function repoRange(repos: Loaded['repos'], repo: string): DirectoryCard[] {
  const prefix = repo.endsWith('/');
  const inRange = (owned: string) => (prefix ? owned.startsWith(repo) : owned === repo);
  let lo = 0;
  let hi = repos.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (repos[mid]!.repo < repo) lo = mid + 1;
    else hi = mid;
  }
  const found: DirectoryCard[] = [];
  for (let i = lo; i < repos.length && inRange(repos[i]!.repo); i += 1) found.push(repos[i]!.card);
  return found;
}

/** The agents/list filter: exact role, an element of skills, an element of repos_owned (a repo ending in `/` matches paths below it). */
export function matchesCardFilter(card: DirectoryCard, filter: { role?: string; skill?: string; repo?: string }): boolean {
  if (filter.role !== undefined && card.role !== filter.role) return false;
  if (filter.skill !== undefined && !card.skills.includes(filter.skill)) return false;
  if (filter.repo !== undefined) {
    const repo = filter.repo;
    if (!card.repos_owned.some((owned) => (repo.endsWith('/') ? owned.startsWith(repo) : owned === repo))) return false;
  }
  return true;
}
