// The team's listings (agents/list, GET /agents, list_teammates) as each process keeps them between teammate writes:
// a listing is good while the counter every teammate write moves (in Redis, shared by every process: the same one as
// the webhook fan-out's copy of endpoint owners) reads as it did when the listing was read, and for KEPT_MS at most,
// should a move have been lost with Redis. Without Redis every listing reads the cards.
import type { PublicCardDoc } from '../store/agent-cards';
import { CardsCopy, type ChangeCounter } from '../webhooks/endpoint-owners';

/** Listings kept at once (a filter each); more start the copy again. */
const MAX_LISTINGS = 256;

export class CardListings {
  private kept = new Map<string, PublicCardDoc[]>();
  private keptFor: object | null = null;
  private readonly copy: CardsCopy;

  constructor(counter: Pick<ChangeCounter, 'current'>) {
    this.copy = new CardsCopy(counter);
  }

  /** A teammate's card was written by this process: its next listings read the cards (others see the counter move). */
  forget(): void {
    this.copy.reset();
  }

  /** The listing `key` names, read with `read` unless kept since the counter last moved. */
  async get(key: string, read: () => Promise<PublicCardDoc[]>): Promise<PublicCardDoc[]> {
    const copy = await this.copy.current();
    if (!copy) return read();
    if (this.keptFor !== copy || this.kept.size >= MAX_LISTINGS) {
      this.kept = new Map();
      this.keptFor = copy;
    }
    const listing = this.kept.get(key);
    if (listing) return listing;
    const fresh = await read();
    // Kept only if nothing moved meanwhile: a write of this process, or another's counter move seen by another call.
    if (this.copy.holds(copy)) this.kept.set(key, fresh);
    return fresh;
  }
}
