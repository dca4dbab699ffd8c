// The teammates' cards as agents/list, handoff targets and the webhook fan-out read them, on every engine, by the
// `agents` indexes: role, and the multikey indexes of skills and owned repos (MongoStore.ensureIndexes).
import type { Collection, Filter } from 'mongodb';
import type { AgentDoc } from '../domain/documents';
import { ownerPrefixes, type TargetCard } from '../domain/recipient-target';
import type { RecipientTarget } from '../domain/schemas';

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

/** A repo filter on repos_owned: the repo, or every repo below one that ends in `/` (a range on the index). */
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
 * A query by skill or repo reads the cards whose array holds it and checks each against the filter: a range on an
 * array matches a card when any element meets each bound, which matchesCardFilter narrows to one element below.
 */
export class AgentCards {
  constructor(private readonly agents: Collection<AgentDoc>) {}

  /** The active cards matching `filter`, by handle, at most `limit`. */
  async matching(filter: CardFilter, limit: number): Promise<PublicCardDoc[]> {
    const query: Filter<AgentDoc> = { status: 'active' };
    if (filter.role !== undefined) query.role = filter.role;
    if (filter.skill !== undefined) query.skills = filter.skill;
    if (filter.repo !== undefined) query.repos_owned = repoMatch(filter.repo);
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
    const query: Filter<AgentDoc> =
      target.kind === 'skill'
        ? { status: 'active', skills: target.value }
        : { status: 'active', repos_owned: { $in: ownerPrefixes(target.value) } };
    return this.agents.find(query, { projection }).sort({ _id: 1 }).limit(500).toArray();
  }

  /** The roles, skills and owned repos of the active teammates, each once. */
  async vocabulary(): Promise<Vocabulary> {
    const [roles, skills, repos] = await Promise.all([
      this.agents.distinct('role', { status: 'active' }),
      this.agents.distinct('skills', { status: 'active' }),
      this.agents.distinct('repos_owned', { status: 'active' }),
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
}
