// Who of an event's participants has a webhook endpoint, as the fan-out asks for every event: kept by each process
// between teammate writes, so most events read no card. Every relay process shares a counter (in Redis) that each
// teammate write moves; a copy is good until it moves (or for KEPT_MS, should a move have been lost with Redis).

/** The counter: read before a lookup, moved after a teammate write. */
export interface ChangeCounter {
  current(): Promise<string | null>;
  bump(): Promise<void>;
}

const KEPT_MS = 60_000;

/**
 * Which copy of the teammates' cards a process holds: a new one once the shared counter moved, this process wrote
 * (`reset`), or KEPT_MS passed. A holder keeps what it reads under the copy `current()` answers and drops it when that
 * changes (EndpointOwners here, service/card-listings.ts).
 */
export class CardsCopy {
  private at: { counter: string | null; since: number } | null = null;

  constructor(private readonly counter: Pick<ChangeCounter, 'current'>) {}

  /** This process wrote a card: the next `current()` starts a new copy. */
  reset(): void {
    this.at = null;
  }

  /** The copy to keep reads under (compare by identity); undefined without Redis, when nothing may be kept. */
  async current(): Promise<object | undefined> {
    const counter = await this.counter.current().catch(() => undefined);
    if (counter === undefined) return undefined;
    const now = Date.now();
    if (this.at?.counter !== counter || now - this.at.since > KEPT_MS) this.at = { counter, since: now };
    return this.at;
  }

  /** Whether `copy` is still current: nothing moved while a read under it was out. */
  holds(copy: object): boolean {
    return this.at === copy;
  }
}

export class EndpointOwners {
  private known = new Map<string, boolean>();
  private knownFor: object | null = null;
  private readonly copy: CardsCopy;

  constructor(
    /** The store's lookup (MongoStore.withWebhookEndpoint). */
    private readonly read: (handles: readonly string[]) => Promise<string[]>,
    private readonly counter: ChangeCounter,
  ) {
    this.copy = new CardsCopy(counter);
  }

  /** A teammate's card was written (by this process): every process looks again. */
  async changed(): Promise<void> {
    this.copy.reset();
    await this.counter.bump().catch(() => {
      // Redis down: the other processes find out within KEPT_MS.
    });
  }

  /** Those of `handles` that are active and have a webhook endpoint that is not disabled, in their order. */
  async withEndpoint(handles: readonly string[]): Promise<string[]> {
    const copy = await this.copy.current();
    if (!copy) return this.read(handles);
    if (this.knownFor !== copy) {
      this.known = new Map();
      this.knownFor = copy;
    }
    const unknown = handles.filter((handle) => !this.known.has(handle));
    const found = new Set(unknown.length > 0 ? await this.read(unknown) : []);
    // Kept only while no write of this process came in between (it started a new copy).
    if (this.copy.holds(copy)) for (const handle of unknown) this.known.set(handle, found.has(handle));
    return handles.filter((handle) => this.known.get(handle) ?? found.has(handle));
  }
}
