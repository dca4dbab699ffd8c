// Index creation, the same on every engine: a collection's indexes are made once (idempotent); an index an earlier
// version made under the same name with other keys is dropped first, to be built again with the keys given, and so
// is one an earlier version made that is gone now.
import type { Collection, CreateIndexesOptions, IndexSpecification } from 'mongodb';

export type IndexSpec = [Collection<any>, IndexSpecification, CreateIndexesOptions & { name: string }];

/**
 * Makes `indexes`, after dropping the `obsolete` ones where they exist (before: an index of the same keys under
 * another name is refused). Each collection's indexes are listed once. One index per command: FerretDB 1.24 drops the
 * connection ("slice bounds out of range") when one createIndexes command names several that exist.
 */
export async function ensureIndexes(
  indexes: readonly IndexSpec[],
  obsolete: ReadonlyArray<[Collection<any>, readonly string[]]> = [],
): Promise<void> {
  const listed = new Map<Collection<any>, Promise<Array<{ name?: string; key?: unknown }>>>();
  const existing = (collection: Collection<any>) => {
    if (!listed.has(collection))
      listed.set(
        collection,
        collection
          .listIndexes()
          .toArray()
          .catch(() => []),
      );
    return listed.get(collection)!;
  };
  for (const [collection, names] of obsolete)
    for (const index of await existing(collection))
      if (index.name && names.includes(index.name)) await collection.dropIndex(index.name);
  for (const [collection, key, options] of indexes) {
    const earlier = (await existing(collection)).find((index) => index.name === options.name);
    if (earlier && JSON.stringify(earlier.key) !== JSON.stringify(key)) await collection.dropIndex(options.name);
    await collection.createIndex(key, options);
  }
}
