// The team's listings (agents/list, GET /agents, list_teammates) as each process keeps them between teammate writes:
// a listing is good while the counter every teammate write moves (in Redis, shared by every process: the same one as
// the webhook fan-out's copy of endpoint owners) reads as it did when the listing was read, and for KEPT_MS at most,
// should a move have been lost with Redis. Without Redis every listing reads the cards.
import type { PublicCardDoc } from '../store/agent-cards';
import type { ChangeCounter } from '../webhooks/endpoint-owners';

const KEPT_MS = 60_000;
/** Listings kept at once (a filter each); more start the copy again. */
const MAX_LISTINGS = 256;

export class CardListings {
  private kept = new Map<string, PublicCardDoc[]>();
  private keptAt: { counter: string | null; since: number } | null = null;

  constructor(private readonly counter: Pick<ChangeCounter, 'current'>) {}

  /** A teammate's card was written by this process: its next listings read the cards (others see the counter move). */
  forget(): void {
    this.keptAt = null;
    this.kept = new Map();
  }

  /** The listing `key` names, read with `read` unless kept since the counter last moved. */
  async get(key: string, read: () => Promise<PublicCardDoc[]>): Promise<PublicCardDoc[]> {
    const counter = await this.counter.current().catch(() => undefined);
    if (counter === undefined) return read();
    const now = Date.now();
    if (this.keptAt?.counter !== counter || now - this.keptAt.since > KEPT_MS) this.forget();
    this.keptAt ??= { counter, since: now };
    const listing = this.kept.get(key);
    if (listing) return listing;
    const at = this.keptAt;
    const fresh = await read();
    // Kept only if nothing moved meanwhile: a write of this process, or another's counter move seen by another call.
    if (this.keptAt === at) {
      if (this.kept.size >= MAX_LISTINGS) this.kept = new Map();
      this.kept.set(key, fresh);
    }
    return fresh;
  }
}
