// agents/list for servers that read every agent to answer `{ role }` or `{ skills }`: the active cards held in
// memory, reloaded when the `_id`-addressed change marker that every card write replaces says they changed.
import { randomUUID } from 'node:crypto';
import type { Collection } from 'mongodb';
import type { AgentDoc, MetaDoc } from '../domain/documents';
import { putById } from './thread-writes';

export type DirectoryCard = Pick<AgentDoc, '_id' | 'handle' | 'name' | 'role' | 'skills' | 'repos_owned' | 'lead'>;

const MARKER_ID = 'agents_changed';

/**
 * Staleness bound: none beyond one call. Every card write replaces the marker with a new random token after the
 * write; every read compares the marker with the token its copy was loaded under, and the copy is loaded after
 * reading the marker. A write the load missed therefore replaced the marker after it was read, and the next call
 * (in any process) sees a different token and reloads. Calls made together share a marker read, but only one sent
 * after each of them began (MarkerReads), so the bound holds for each.
 */
export interface CardFilter {
  role?: string;
  skill?: string;
  repo?: string;
}

interface Loaded {
  cards: DirectoryCard[];
  /** Active teammates whose webhook endpoint is set and not disabled. */
  endpoints: Set<string>;
  byRole: Map<string, DirectoryCard[]>;
  bySkill: Map<string, DirectoryCard[]>;
  /** Every (repo, card) pair, sorted by repo: an exact repo or a prefix is a binary-searched range. */
  repos: Array<{ repo: string; card: DirectoryCard }>;
}

export class AgentDirectory {
  private copy: { token: string | null; loaded: Loaded } | undefined;
  /** A load in flight, shared only by calls that read the same marker. */
  private loading: { token: string | null; loaded: Promise<Loaded> } | undefined;
  private readonly markers: MarkerReads;

  constructor(
    private readonly agents: Collection<AgentDoc>,
    private readonly meta: Collection<MetaDoc>,
  ) {
    this.markers = new MarkerReads(async () => ((await this.meta.findOne({ _id: MARKER_ID }))?.value as string | undefined) ?? null);
  }

  /** Call after every write of a teammate's document (store.writeAgent does) and after registering one. */
  async changed(): Promise<void> {
    await putById(this.meta, MARKER_ID, { value: randomUUID(), at: new Date() });
  }

  /** Every active card, sorted by handle. */
  async cards(): Promise<readonly DirectoryCard[]> {
    return (await this.current()).cards;
  }

  /**
   * The cards matching `filter` (matchesCardFilter), sorted by handle, at most `limit`: looked up in the role,
   * skill or repo index, so a call costs what it returns, not the size of the team.
   */
  async matching(filter: CardFilter, limit: number): Promise<DirectoryCard[]> {
    const loaded = await this.current();
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

  /** Those of `handles` that have a webhook endpoint to deliver to (one marker read while nothing changed). */
  async withEndpoint(handles: readonly string[]): Promise<string[]> {
    const { endpoints } = await this.current();
    return handles.filter((handle) => endpoints.has(handle));
  }

  private async current(): Promise<Loaded> {
    const token = await this.markers.read();
    if (this.copy && this.copy.token === token) return this.copy.loaded;
    if (this.loading?.token !== token) {
      const loading = { token, loaded: this.load() };
      this.loading = loading;
      void loading.loaded.finally(() => {
        if (this.loading === loading) this.loading = undefined;
      }).catch(() => {});
    }
    const loaded = await this.loading.loaded;
    this.copy = { token, loaded };
    return loaded;
  }

  private async load(): Promise<Loaded> {
    const docs = await this.agents
      .find({}, { projection: { _id: 1, handle: 1, name: 1, role: 1, skills: 1, repos_owned: 1, lead: 1, status: 1, 'notification.disabled_at': 1 } })
      .toArray();
    const active = docs.filter((doc) => doc.status === 'active');
    const cards = active.map(({ status: _s, notification: _n, ...card }) => card as DirectoryCard).sort(byHandle);
    const endpoints = new Set(active.filter((doc) => doc.notification && !doc.notification.disabled_at).map((doc) => doc._id));
    const byRole = new Map<string, DirectoryCard[]>();
    const bySkill = new Map<string, DirectoryCard[]>();
    const repos: Loaded['repos'] = [];
    for (const card of cards) {
      push(byRole, card.role, card);
      for (const skill of new Set(card.skills)) push(bySkill, skill, card);
      for (const repo of new Set(card.repos_owned)) repos.push({ repo, card });
    }
    repos.sort((a, b) => (a.repo < b.repo ? -1 : a.repo > b.repo ? 1 : byHandle(a.card, b.card)));
    return { cards, endpoints, byRole, bySkill, repos };
  }
}

/**
 * Reads of the change marker, shared without going stale: a call while no read is out sends one; calls while one is
 * out wait for it and share the next, sent once it is back (so after each of them began). Under load (the webhooks
 * worker looks endpoints up for several events at once) that is at most two reads out, however many callers.
 */
export class MarkerReads {
  private out: Promise<string | null> | undefined;
  private next: Promise<string | null> | undefined;

  constructor(private readonly readNow: () => Promise<string | null>) {}

  read(): Promise<string | null> {
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

  private sendNext(): Promise<string | null> {
    this.next = undefined;
    return this.read();
  }
}

function byHandle(a: DirectoryCard, b: DirectoryCard): number {
  return a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
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
