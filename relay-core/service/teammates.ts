// Teammates: registration, API keys, cards, blocks. Public reads return card fields only.
import type { CardListings } from './card-listings';
import type { Logger } from 'pino';
import { apiKeyId, hashApiKey, issueApiKey } from '../ops/api-keys';
import { systemClock, type Clock } from '../domain/clock';
import type { AgentDoc, NotificationEndpoint } from '../domain/documents';
import { assertNoBlockBetween } from '../domain/blocks';
import { RelayError } from '../domain/errors';
import type { MongoStore } from '../store/mongo-store';
import { isDuplicateKey } from '../store/thread-writes';
import { type PublicCardField, type Vocabulary } from '../store/agent-cards';
import type { AgentCardInput, CardUpdate } from '../domain/schemas';
import { LRUCache } from 'lru-cache';
import { targetCandidates } from '../domain/recipient-target';
import type { RecipientTarget } from '../domain/schemas';

/** The fields anyone on the relay may read about a teammate. */
export interface PublicCard {
  handle: string;
  name: string;
  role: string;
  skills: string[];
  repos_owned: string[];
  /** The teammate's lead (a handle); present only when set. */
  lead?: string;
}

/** What a teammate reads about itself: its card plus settings, never keys or secrets. */
export interface OwnCard extends PublicCard {
  tools: string[];
  slack_user_id: string | null;
  /** `gone_at` appears once the receiver answered 410 Gone (nothing is sent until a new URL is set). */
  notification: { url: string; verified: boolean; gone_at?: string } | null;
}

/** Reads only the fields agents/list reads on every server (PUBLIC_CARD_FIELDS). */
export function publicCard(doc: Pick<AgentDoc, PublicCardField>): PublicCard {
  return {
    handle: doc.handle,
    name: doc.name,
    role: doc.role,
    skills: doc.skills,
    repos_owned: doc.repos_owned,
    ...(doc.lead ? { lead: doc.lead } : {}),
  };
}

export function ownCard(doc: AgentDoc): OwnCard {
  return {
    ...publicCard(doc),
    tools: doc.tools,
    slack_user_id: doc.slack_user_id,
    notification: doc.notification
      ? {
          url: doc.notification.url,
          verified: doc.notification.verified,
          ...(doc.notification.disabled_at ? { gone_at: doc.notification.disabled_at.toISOString() } : {}),
        }
      : null,
  };
}

export interface TeammatesDeps {
  store: MongoStore;
  keyPepper: string;
  log: Logger;
  clock?: Clock;
  /** How long a process trusts a cached key or card; a revoked key stops working everywhere within it. */
  cacheMs?: number;
  /** The team's listings as this process keeps them between teammate writes; without, every listing reads the cards. */
  listings?: CardListings;
  /** Webhook endpoints (webhooks/endpoint-lifecycle.ts): a checked new endpoint, and who challenges it (verify queue). */
  webhooks: {
    newEndpoint(url: string, now: Date): Promise<{ endpoint: NotificationEndpoint; secret: string }>;
    onEndpointSet(handle: string, endpointUpdatedAt: Date): Promise<void>;
  };
}

export class Teammates {
  private readonly store: MongoStore;
  private readonly keyPepper: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly agentCache: LRUCache<string, AgentDoc>;
  private readonly keyCache: LRUCache<string, string>;
  private readonly webhooks: TeammatesDeps['webhooks'];
  private readonly listings: CardListings | undefined;

  constructor(deps: TeammatesDeps) {
    this.webhooks = deps.webhooks;
    this.listings = deps.listings;
    this.store = deps.store;
    this.keyPepper = deps.keyPepper;
    this.log = deps.log;
    this.clock = deps.clock ?? systemClock;
    const cache = { max: 10_000, ttl: deps.cacheMs ?? 5_000 };
    this.agentCache = new LRUCache(cache);
    this.keyCache = new LRUCache(cache);
  }

  async register(input: AgentCardInput): Promise<{ card: OwnCard; api_key: string }> {
    if (input.lead !== undefined) await this.assertLead(input.handle, input.lead);
    const now = this.clock.now();
    const doc: AgentDoc = {
      _id: input.handle,
      handle: input.handle,
      team: input.handle.split('@')[1]!,
      name: input.name,
      role: input.role,
      skills: input.skills,
      repos_owned: input.repos_owned,
      tools: input.tools,
      slack_user_id: input.slack_user_id ?? null,
      ...(input.lead ? { lead: input.lead } : {}),
      status: 'active',
      blocked: [],
      notification: null,
      created_at: now,
      updated_at: now,
    };
    if (input.slack_user_id) {
      try {
        await this.store.slackLinks.insertOne({ _id: input.slack_user_id, handle: input.handle, created_at: now });
      } catch (error) {
        if (isDuplicateKey(error)) {
          throw new RelayError(
            'conflict',
            `body.slack_user_id: ${input.slack_user_id} is already linked to another teammate`,
            { field: 'slack_user_id' },
          );
        }
        throw error;
      }
    }
    try {
      await this.store.insertAgent(doc);
    } catch (error) {
      if (input.slack_user_id)
        await this.store.slackLinks.deleteOne({ _id: input.slack_user_id, handle: input.handle });
      if (isDuplicateKey(error))
        throw new RelayError('conflict', `body.handle: ${input.handle} is already registered`, { field: 'handle' });
      throw error;
    }
    const api_key = await this.issueKey(input.handle);
    this.log.info({ handle: input.handle, key_id: apiKeyId(api_key) }, 'teammate registered');
    return { card: ownCard(doc), api_key };
  }

  /** The active teammate a bearer key belongs to, or null. */
  async authenticate(apiKey: string): Promise<AgentDoc | null> {
    if (!apiKeyId(apiKey)) return null;
    const hash = hashApiKey(apiKey, this.keyPepper);
    let handle = this.keyCache.get(hash);
    if (handle === undefined) {
      const key = await this.store.apiKeys.findOne({ _id: hash });
      if (!key) return null;
      handle = key.handle;
      this.keyCache.set(hash, handle);
    }
    const agent = await this.get(handle);
    return agent && agent.status === 'active' ? agent : null;
  }

  /** The card of `handle` when this process holds it (get's cache), without a read; undefined otherwise. */
  cached(handle: string): AgentDoc | undefined {
    return this.agentCache.get(handle);
  }

  /** Any teammate by handle (disabled ones too: their threads stay readable), or null. */
  async get(handle: string): Promise<AgentDoc | null> {
    const cached = this.agentCache.get(handle);
    if (cached) return cached;
    const doc = await this.store.agentWriter.read(handle);
    if (doc) this.agentCache.set(handle, doc);
    return doc;
  }

  /**
   * Every Slack user linked to a teammate, with its handle: one read of the links, whatever the team's size (a link
   * may outlive its teammate's registration or belong to a disabled one: check the teammate before using it).
   */
  async slackLinks(): Promise<Array<{ slackUser: string; handle: string }>> {
    const links = await this.store.slackLinks.find({}, { projection: { handle: 1 } }).toArray();
    return links.map((link) => ({ slackUser: link._id, handle: link.handle }));
  }

  async bySlackUser(slackUserId: string): Promise<AgentDoc | null> {
    const link = await this.store.slackLinks.findOne({ _id: slackUserId });
    if (!link) return null;
    const agent = await this.get(link.handle);
    return agent && agent.status === 'active' ? agent : null;
  }

  /** The roles, skills and owned repos of the active teammates, each once, whatever the team's size. */
  vocabulary(): Promise<Vocabulary> {
    return this.store.cards.vocabulary();
  }

  /** Exact role, an element of skills, an element of repos_owned (a repo ending in `/` also matches paths below it). */
  async list(filter: { role?: string; skill?: string; repo?: string }, limit = 500): Promise<PublicCard[]> {
    const read = () => this.store.cards.matching(filter, limit);
    const cards = this.listings
      ? await this.listings.get(JSON.stringify([filter.role, filter.skill, filter.repo, limit]), read)
      : await read();
    return cards.map(publicCard);
  }

  /** The active teammates a role, skill or owner target names (domain/recipient-target.ts), sorted by handle. */
  async candidates(target: RecipientTarget): Promise<AgentDoc[]> {
    const cards = await this.store.cards.forTarget(target);
    const docs = await Promise.all(targetCandidates(cards, target).map((card) => this.get(card.handle)));
    return docs.filter((doc): doc is AgentDoc => doc !== null && doc.status === 'active');
  }

  /** Updates the caller's own card; a new webhook URL gets a new signing secret, returned this once. */
  async updateCard(handle: string, update: CardUpdate): Promise<OwnCard & { notification_secret?: string }> {
    const current = await this.requireActive(handle);
    const now = this.clock.now();
    const set: Partial<AgentDoc> = { updated_at: now };
    for (const field of ['name', 'role', 'skills', 'repos_owned', 'tools'] as const) {
      if (update[field] !== undefined) (set as Record<string, unknown>)[field] = update[field];
    }
    if (update.lead !== undefined) {
      if (update.lead !== null) await this.assertLead(handle, update.lead);
      set.lead = update.lead;
    }
    let secret: string | undefined;
    if (update.notification_url === null) set.notification = null;
    else if (
      update.notification_url !== undefined &&
      (update.notification_url !== current.notification?.url || current.notification?.disabled_at)
    ) {
      const fresh = await this.webhooks.newEndpoint(update.notification_url, now);
      set.notification = fresh.endpoint;
      secret = fresh.secret;
    }
    const updated = (await this.store.writeAgent(handle, (doc) => ({ ...doc, ...set }))).after;
    if (!updated) throw new RelayError('unauthenticated', 'This teammate no longer exists');
    this.agentCache.delete(handle);
    this.log.info({ handle, fields: Object.keys(set) }, 'card updated');
    if (secret) {
      // Not fatal: the webhook processor re-enqueues the challenge when it meets an unverified endpoint.
      await this.webhooks
        .onEndpointSet(handle, now)
        .catch((error: Error) => this.log.warn({ handle, err: error.message }, 'endpoint challenge not enqueued yet'));
    }
    return secret ? { ...ownCard(updated), notification_secret: secret } : ownCard(updated);
  }

  /** A lead is another registered, active teammate; otherwise invalid_params naming the field and the handle. */
  private async assertLead(handle: string, lead: string): Promise<void> {
    if (lead === handle)
      throw new RelayError('invalid_params', 'body.lead: a teammate cannot be its own lead', { field: 'lead' });
    const doc = await this.store.agentWriter.read(lead);
    if (!doc)
      throw new RelayError('invalid_params', `body.lead: no teammate with handle ${lead} (register the lead first)`, {
        field: 'lead',
      });
    if (doc.status !== 'active')
      throw new RelayError('invalid_params', `body.lead: ${lead} is disabled`, { field: 'lead' });
  }

  /** Drops the cached card of `handle` after a write made elsewhere (the webhook endpoint lifecycle). */
  forget(handle: string): void {
    this.agentCache.delete(handle);
  }

  async blocks(handle: string): Promise<string[]> {
    return (await this.requireActive(handle)).blocked;
  }

  /** Blocks `other` for `handle`; the block goes into `handle`'s own history only (the blocked side is not told). */
  async block(handle: string, other: string): Promise<string[]> {
    if (other === handle) throw new RelayError('invalid_params', 'body.handle: you cannot block yourself');
    if (!(await this.get(other))) throw new RelayError('recipient_not_found', `No teammate with handle ${other}`);
    const { before, after: updated } = await this.store.writeAgent(handle, (doc) => ({
      ...doc,
      blocked: doc.blocked.includes(other) ? doc.blocked : [...doc.blocked, other],
      updated_at: this.clock.now(),
    }));
    this.agentCache.delete(handle);
    if (before && !before.blocked.includes(other)) await this.history(handle, 'teammate.blocked', 'teammate', other);
    return updated?.blocked ?? [];
  }

  async unblock(handle: string, other: string): Promise<string[]> {
    const { before, after: updated } = await this.store.writeAgent(handle, (doc) => ({
      ...doc,
      blocked: doc.blocked.filter((b) => b !== other),
      updated_at: this.clock.now(),
    }));
    this.agentCache.delete(handle);
    if (before?.blocked.includes(other)) await this.history(handle, 'teammate.unblocked', 'teammate', other);
    return updated?.blocked ?? [];
  }

  /** An entry of the teammate's own account history (GET /agents/me/audit), made over REST by `actor`. */
  private async history(
    handle: string,
    action: string,
    resource_type: string,
    resource_id: string,
    actor = handle,
  ): Promise<void> {
    await this.store.accountLog.record([
      { handle, at: this.clock.now(), actor, action, resource_type, resource_id, via: 'api' },
    ]);
  }

  /** Throws teammate_blocked when either side blocks the other. */
  assertNotBlocked(a: AgentDoc, b: AgentDoc): void {
    assertNoBlockBetween(a, b);
  }

  /** Revokes every key of the teammate and issues a new one, shown this once; `actor` rotated it (itself, or `admin`). */
  async rotateKey(handle: string, actor = handle): Promise<{ api_key: string; key_id: string }> {
    const doc = await this.store.agentWriter.read(handle);
    if (!doc) throw new RelayError('recipient_not_found', `No teammate with handle ${handle}`);
    if (doc.status !== 'active') throw new RelayError('conflict', `${handle} is disabled`);
    const revoked = await this.store.apiKeys.find({ handle }, { projection: { _id: 1 } }).toArray();
    const key = await this.issueKey(handle);
    await this.store.apiKeys.deleteMany({ _id: { $in: revoked.map((k) => k._id) } });
    for (const k of revoked) this.keyCache.delete(k._id);
    const keyId = apiKeyId(key)!;
    this.log.info({ handle, key_id: keyId, revoked: revoked.length }, 'api key rotated');
    await this.history(handle, 'key.rotated', 'api_key', keyId, actor);
    return { api_key: key, key_id: keyId };
  }

  /** Disables a teammate: its keys are revoked and nobody can hand off to it; its threads stay readable by the other side. */
  async disable(handle: string): Promise<OwnCard> {
    const { after: updated } = await this.store.writeAgent(handle, (doc) => ({
      ...doc,
      status: 'disabled',
      updated_at: this.clock.now(),
    }));
    if (!updated) throw new RelayError('recipient_not_found', `No teammate with handle ${handle}`);
    await this.store.apiKeys.deleteMany({ handle });
    this.agentCache.delete(handle);
    this.log.info({ handle }, 'teammate disabled');
    return ownCard(updated);
  }

  private async issueKey(handle: string): Promise<string> {
    const issued = issueApiKey(this.keyPepper);
    await this.store.apiKeys.insertOne({
      _id: issued.hash,
      key_id: issued.keyId,
      handle,
      created_at: this.clock.now(),
    });
    return issued.key;
  }

  /** The teammate's current card, read from the store; unauthenticated when it is not active. */
  async requireActive(handle: string): Promise<AgentDoc> {
    const doc = await this.store.agentWriter.read(handle);
    if (!doc || doc.status !== 'active') throw new RelayError('unauthenticated', 'This teammate is not active');
    return doc;
  }
}
