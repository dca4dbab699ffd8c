// The teammates' cards as agents/list, handoff targets and the webhook fan-out read them, on every engine: a card's
// role and status by the `agents` indexes, its skills and owned repos through `agent_tags`, one document per
// (kind, value, handle), since the embedded FerretDB cannot index an array's elements.
import type { Collection, Filter } from 'mongodb';
import type { AgentDoc } from '../domain/documents';
import { ownerPrefixes, type TargetCard } from '../domain/recipient-target';
import type { RecipientTarget } from '../domain/schemas';
import { isDuplicateKey } from './thread-writes';

/** The fields of a teammate's public card (service/teammates.ts publicCard): what every card query reads. */
export const PUBLIC_CARD_FIELDS = ['handle', 'name', 'role', 'skills', 'repos_owned', 'lead'] as const;
export type PublicCardField = (typeof PUBLIC_CARD_FIELDS)[number];
export const PUBLIC_CARD_PROJECTION = Object.fromEntries(PUBLIC_CARD_FIELDS.map((field) => [field, 1])) as Record<
  PublicCardField,
  1
>;
export type PublicCardDoc = Pick<AgentDoc, '_id' | PublicCardField>;

/** What the active cards name, each once (Teammates.vocabulary). */
export interface Vocabulary {
  roles: string[];
  skills: string[];
  repos_owned: string[];
}

export interface CardFilter {
  role?: string;
  skill?: string;
  /** An element of repos_owned; one ending in `/` also matches the repos below it. */
  repo?: string;
}

type TagKind = 'skill' | 'repo';

/** One skill or owned repo of one active teammate: `_id` `kind\u0000value\u0000handle`. */
export interface AgentTagDoc {
  _id: string;
  kind: TagKind;
  value: string;
  handle: string;
}

function tagsOf(card: Pick<AgentDoc, '_id' | 'status' | 'skills' | 'repos_owned'> | null): AgentTagDoc[] {
  if (!card || card.status !== 'active') return [];
  const tag = (kind: TagKind, value: string): AgentTagDoc => ({
    _id: `${kind}\u0000${value}\u0000${card._id}`,
    kind,
    value,
    handle: card._id,
  });
  return [...new Set(card.skills)]
    .map((v) => tag('skill', v))
    .concat([...new Set(card.repos_owned)].map((v) => tag('repo', v)));
}

/** A repo filter on the tags' values: the repo, or every repo below one that ends in `/` (a range on the index). */
function repoMatch(repo: string): string | { $gte: string; $lt: string } {
  return repo.endsWith('/') ? { $gte: repo, $lt: `${repo}\uffff` } : repo;
}

/** The agents/list filter on one card: exact role, an element of skills, an element of repos_owned (or below a `dir/`). */
export function matchesCardFilter(
  card: Pick<AgentDoc, 'role' | 'skills' | 'repos_owned'>,
  filter: CardFilter,
): boolean {
  if (filter.role !== undefined && card.role !== filter.role) return false;
  if (filter.skill !== undefined && !card.skills.includes(filter.skill)) return false;
  if (filter.repo !== undefined) {
    const repo = filter.repo;
    if (!card.repos_owned.some((owned) => (repo.endsWith('/') ? owned.startsWith(repo) : owned === repo))) return false;
  }
  return true;
}

/**
 * A card's tags are never fewer than the card's skills and repos: its writer adds the tags the card is about to
 * have before writing it (adding), and removes those it lost after (removeLost). A query reads the cards its tags name
 * and checks each against the filter, so a tag left behind (its writer died, or lost a race) never lists a card that
 * no longer matches; the migration (and a test) can put every tag right at once (reconcile).
 */
export class AgentCards {
  constructor(
    private readonly agents: Collection<AgentDoc>,
    readonly tags: Collection<AgentTagDoc>,
  ) {}

  /** Before a card is written as `next`: the tags it will have (none taken away). */
  async adding(next: AgentDoc | undefined): Promise<void> {
    if (next) await this.insert(tagsOf(next));
  }

  /** After a card was written from `before` to `after` (its new tags went in first, adding): removes those it lost. */
  async removeLost(before: AgentDoc | null, after: AgentDoc | null): Promise<void> {
    const kept = new Set(tagsOf(after).map((t) => t._id));
    const gone = tagsOf(before).filter((t) => !kept.has(t._id));
    if (gone.length) await this.tags.deleteMany({ _id: { $in: gone.map((t) => t._id) } });
  }

  /** Every card's tags as the card says (the migration; the bench after seeding cards): one read of each collection. */
  async reconcile(): Promise<number> {
    const cards = await this.agents
      .find({}, { projection: { _id: 1, status: 1, skills: 1, repos_owned: 1 } })
      .toArray();
    const want = new Map(cards.flatMap((card) => tagsOf(card)).map((t) => [t._id, t]));
    const have = new Set((await this.tags.find({}, { projection: { _id: 1 } }).toArray()).map((t) => t._id));
    const missing = [...want.values()].filter((t) => !have.has(t._id));
    const stale = [...have].filter((id) => !want.has(id));
    await this.insert(missing);
    for (let i = 0; i < stale.length; i += 1_000)
      await this.tags.deleteMany({ _id: { $in: stale.slice(i, i + 1_000) } });
    return missing.length + stale.length;
  }

  private async insert(tags: AgentTagDoc[]): Promise<void> {
    for (let i = 0; i < tags.length; i += 1_000) {
      try {
        await this.tags.insertMany(tags.slice(i, i + 1_000), { ordered: false });
      } catch (error) {
        // Tags another write (or an earlier try) put in already.
        const errors = (error as { writeErrors?: unknown[] }).writeErrors;
        if (!isDuplicateKey(error) && !(Array.isArray(errors) && errors.every(isDuplicateKey))) throw error;
      }
    }
  }

  /** The active cards matching `filter`, by handle, at most `limit`. */
  async matching(filter: CardFilter, limit: number): Promise<PublicCardDoc[]> {
    const query: Filter<AgentDoc> = { status: 'active' };
    if (filter.role !== undefined) query.role = filter.role;
    const tagged =
      filter.skill !== undefined
        ? { kind: 'skill' as const, value: filter.skill }
        : filter.repo !== undefined
          ? { kind: 'repo' as const, value: repoMatch(filter.repo) }
          : null;
    if (tagged) {
      const handles = await this.handles(tagged);
      if (handles.length === 0) return [];
      query._id = { $in: handles };
    }
    const docs = await this.agents
      .find(query, { projection: PUBLIC_CARD_PROJECTION })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.filter((doc) => matchesCardFilter(doc, filter));
  }

  /** The active cards a role, skill or owner target could name (domain/recipient-target.ts picks among them). */
  async forTarget(target: RecipientTarget): Promise<TargetCard[]> {
    const projection = { handle: 1, role: 1, skills: 1, repos_owned: 1 };
    if (target.kind === 'role')
      return this.agents
        .find({ status: 'active', role: target.value }, { projection })
        .sort({ _id: 1 })
        .limit(500)
        .toArray();
    const handles = await this.handles(
      target.kind === 'skill'
        ? { kind: 'skill', value: target.value }
        : { kind: 'repo', value: { $in: ownerPrefixes(target.value) } },
    );
    if (handles.length === 0) return [];
    return this.agents
      .find({ _id: { $in: handles }, status: 'active' }, { projection })
      .sort({ _id: 1 })
      .limit(500)
      .toArray();
  }

  /** The roles, skills and owned repos of the active teammates, each once. */
  async vocabulary(): Promise<Vocabulary> {
    const [roles, skills, repos] = await Promise.all([
      this.agents.distinct('role', { status: 'active' }),
      this.tags.distinct('value', { kind: 'skill' }),
      this.tags.distinct('value', { kind: 'repo' }),
    ]);
    return {
      roles: (roles as string[]).sort(),
      skills: (skills as string[]).sort(),
      repos_owned: (repos as string[]).sort(),
    };
  }

  /** Those of `handles` that are active and have a webhook endpoint that is not disabled, in their order. */
  async withWebhookEndpoint(handles: readonly string[]): Promise<string[]> {
    if (handles.length === 0) return [];
    const docs = await this.agents
      .find(
        { _id: { $in: [...handles] }, status: 'active', notification: { $ne: null }, 'notification.disabled_at': null },
        { projection: { _id: 1 } },
      )
      .toArray();
    const found = new Set(docs.map((doc) => doc._id));
    return handles.filter((handle) => found.has(handle));
  }

  private async handles(tag: { kind: TagKind; value: string | Record<string, unknown> }): Promise<string[]> {
    const docs = await this.tags
      .find({ kind: tag.kind, value: tag.value } as Filter<AgentTagDoc>, { projection: { handle: 1 } })
      .toArray();
    return [...new Set(docs.map((doc) => doc.handle))];
  }
}
