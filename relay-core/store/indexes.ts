// Index creation, the same on every engine: a collection's indexes are made once (idempotent), and an index an
// earlier version made under the same name with other keys is dropped first, to be built again with the keys given.
import type { Collection, CreateIndexesOptions, IndexSpecification } from 'mongodb';

export type IndexSpec = [Collection<any>, IndexSpecification, CreateIndexesOptions & { name: string }];

/**
 * One index per command: FerretDB 1.24 drops the connection ("slice bounds out of range") when one createIndexes
 * command names several that exist.
 */
export async function ensureIndexes(indexes: readonly IndexSpec[]): Promise<void> {
  const existing = new Map<Collection<any>, Promise<Array<{ name?: string; key?: unknown }>>>();
  for (const [collection, key, options] of indexes) {
    if (!existing.has(collection))
      existing.set(
        collection,
        collection
          .listIndexes()
          .toArray()
          .catch(() => []),
      );
    const earlier = (await existing.get(collection)!).find((index) => index.name === options.name);
    if (earlier && JSON.stringify(earlier.key) !== JSON.stringify(key)) await collection.dropIndex(options.name);
    await collection.createIndex(key, options);
  }
}

/** Drops the named indexes where they exist (made by earlier versions). */
export async function dropIndexes(collection: Collection<any>, names: readonly string[]): Promise<void> {
  const present = await collection
    .listIndexes()
    .toArray()
    .then(
      (list) => list.map((index) => index.name as string),
      () => [] as string[],
    );
  for (const name of names.filter((n) => present.includes(n))) await collection.dropIndex(name);
}
