// The Mcp-Session-Id sessions this process holds for /mcp: whose key opened each, when it was last used, and its end.
import { createHash } from 'node:crypto';

/** What the transport side (http-session.ts) gives the registry for one open session. */
export interface McpSessionPort {
  /** Ends the session: its streams close, its subscriptions stop, its id is forgotten by the transport. */
  close(): Promise<void>;
}

export interface McpSessionLimits {
  /** A session with no request for this long (and no stream open) is closed; its id then answers 404. */
  idleMs: number;
  /**
   * How many sessions one key holds at once; opening one more closes the key's least recently used one that has no
   * request being answered (an open GET stream alone does not count: clients that leave one open are common).
   */
  perKey: number;
}

interface Entry<S extends McpSessionPort> {
  session: S;
  owner: string;
  lastUsed: number;
  /** POSTs and DELETEs of this session still being answered. */
  inFlight: number;
  /** GET streams of this session still open. */
  streams: number;
}

/** The key's fingerprint a session is bound to: its SHA-256, so the registry never holds a key. */
export function keyOwner(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * Sessions live in the process that opened them (the transport, the MCP server and its subscriptions are in memory):
 * with several api processes, a balancer must route a request carrying Mcp-Session-Id to the same process, or the
 * client is told 404 and opens a new session, as the MCP specification has it.
 */
export class McpSessions<S extends McpSessionPort = McpSessionPort> {
  private readonly entries = new Map<string, Entry<S>>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(
    readonly limits: McpSessionLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => void this.expire(), Math.min(Math.max(limits.idleMs / 2, 250), 60_000));
    this.sweeper.unref();
  }

  get size(): number {
    return this.entries.size;
  }

  /** False once the relay is stopping: no session is opened then. */
  get open(): boolean {
    return !this.closed;
  }

  /**
   * Room for one more session of `owner`: closes its least recently used sessions with no request in flight (a GET
   * stream ends with its session) until it holds fewer than the bound. False when every one of them is answering a
   * request (the caller refuses the new one).
   */
  async makeRoom(owner: string): Promise<boolean> {
    const mine = [...this.entries].filter(([, e]) => e.owner === owner).sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    let excess = mine.length - this.limits.perKey + 1;
    for (const [id, entry] of mine) {
      if (excess <= 0) break;
      if (entry.inFlight > 0) continue;
      await this.end(id);
      excess -= 1;
    }
    return excess <= 0;
  }

  /** Records a session the transport has just given an id (during its initialize request). */
  add(id: string, owner: string, session: S): void {
    this.entries.set(id, { session, owner, lastUsed: this.now(), inFlight: 0, streams: 0 });
  }

  /** The session `id` if `owner`'s key opened it; another key's session is as unknown as a closed one. */
  find(id: string, owner: string): S | undefined {
    const entry = this.entries.get(id);
    return entry && entry.owner === owner ? entry.session : undefined;
  }

  /** Counts a request of session `id` (a GET: its stream) as in flight until its response closes. */
  use(id: string, res: { once(event: 'close', listener: () => void): unknown }, stream: boolean): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    const count = stream ? 'streams' : 'inFlight';
    entry[count] += 1;
    entry.lastUsed = this.now();
    res.once('close', () => {
      entry[count] -= 1;
      entry.lastUsed = this.now();
    });
  }

  /** Forgets session `id` (the transport closed it: DELETE, or its end below). */
  forget(id: string): void {
    this.entries.delete(id);
  }

  /** Closes session `id`. */
  async end(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    await entry.session.close().catch(() => {});
  }

  /** Closes the sessions idle (no request, no stream) for `idleMs` or more. */
  async expire(): Promise<void> {
    const cutoff = this.now() - this.limits.idleMs;
    const idle = [...this.entries]
      .filter(([, e]) => e.inFlight === 0 && e.streams === 0 && e.lastUsed <= cutoff)
      .map(([id]) => id);
    await Promise.all(idle.map((id) => this.end(id)));
  }

  /** At relay stop: no new sessions, and every open one closed (its streams end, so the server can close). */
  async closeAll(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.entries.keys()].map((id) => this.end(id)));
  }
}
