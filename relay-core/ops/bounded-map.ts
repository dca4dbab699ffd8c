// Process memory that stays bounded: what a process remembers to save reads forgets its oldest entries first.

/** Sets `key` in `map`; a new key in a map already holding `max` entries first makes it forget its oldest one. */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (!map.has(key) && map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
