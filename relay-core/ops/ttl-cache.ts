// A small bounded map whose entries expire: agents and key lookups on the hot path.
import { setBounded } from './bounded-map';

export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    setBounded(this.entries, key, { value, expires: Date.now() + this.ttlMs }, this.maxEntries);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }
}
