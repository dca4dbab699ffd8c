// Who of an event's participants has a webhook endpoint, as the fan-out asks for every event: kept by each process
// between teammate writes, so most events read no card. Every relay process shares a counter (in Redis) that each
// teammate write moves; a copy is good until it moves (or for KEPT_MS, should a move have been lost with Redis).

/** The counter: read before a lookup, moved after a teammate write. */
export interface ChangeCounter {
  current(): Promise<string | null>;
  bump(): Promise<void>;
}

const KEPT_MS = 60_000;

export class EndpointOwners {
  private known = new Map<string, boolean>();
  private knownAt: { counter: string | null; since: number } | null = null;

  constructor(
    /** The store's lookup (MongoStore.withWebhookEndpoint). */
    private readonly read: (handles: readonly string[]) => Promise<string[]>,
    private readonly counter: ChangeCounter,
  ) {}

  /** A teammate's card was written (by this process): every process looks again. */
  async changed(): Promise<void> {
    this.knownAt = null;
    await this.counter.bump().catch(() => {
      // Redis down: the other processes find out within KEPT_MS.
    });
  }

  /** Those of `handles` that are active and have a webhook endpoint that is not disabled, in their order. */
  async withEndpoint(handles: readonly string[]): Promise<string[]> {
    const counter = await this.counter.current().catch(() => undefined);
    if (counter === undefined) return this.read(handles);
    const now = Date.now();
    if (this.knownAt?.counter !== counter || now - this.knownAt.since > KEPT_MS) {
      this.known = new Map();
      this.knownAt = { counter, since: now };
    }
    const at = this.knownAt;
    const unknown = handles.filter((handle) => !this.known.has(handle));
    const found = new Set(unknown.length > 0 ? await this.read(unknown) : []);
    // Kept only while no write of this process came in between (it started a new copy).
    if (this.knownAt === at) for (const handle of unknown) this.known.set(handle, found.has(handle));
    return handles.filter((handle) => this.known.get(handle) ?? found.has(handle));
  }
}
