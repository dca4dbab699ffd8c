// Reading a query's plan (explain) the same way on every engine the tests run on.

/**
 * Whether `plan` (an explain's JSON) reads the index named `index`, or seeks another index by equality on `field`:
 * FerretDB 2 (DocumentDB) builds indexes in which every key serves a filter, and may read `sent { from, …, to }` for
 * `{ to }` as directly as `inbox { to, … }`. On SQLite and MongoDB an index serves only from its first key on, and
 * the plan must name `index` (their plans have no `Index Cond`).
 */
export function readsIndexOn(plan: string, index: string, field: string): boolean {
  if (new RegExp(`[_" ]${index}\\b`).test(plan)) return true;
  // DocumentDB's condition: `document @= '<BSON of { field: <string> }>'`, the key as BSON hex (type 02, name, NUL).
  const key = `02${Buffer.from(field).toString('hex')}00`;
  return /"Index Cond":"[^"]*/.exec(plan)?.[0].toLowerCase().includes(key) ?? false;
}
