// handoff-relay patch for FerretDB 1.24.2 (copied into internal/backends/sqlite/metadata/ at build time).
//
// Marks indexes multikey: one of their fields holds an array in some document, which an expression index cannot
// serve as MongoDB does (matching each element), so the SQLite backend stops pushing queries down to it
// (../sqlite_index_pushdown.go). The mark is kept in the collection's settings, as the index itself is.

package metadata

import (
	"context"
	"fmt"
	"slices"

	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// IndexesSetMultikey marks the named indexes of the collection multikey. Unknown names are ignored.
func (r *Registry) IndexesSetMultikey(ctx context.Context, dbName, collectionName string, names []string) error {
	r.rw.Lock()
	defer r.rw.Unlock()

	db := r.DatabaseGetExisting(ctx, dbName)
	c := r.collectionGet(dbName, collectionName)

	if db == nil || c == nil {
		return nil
	}

	changed := false

	for i := range c.Settings.Indexes {
		if !c.Settings.Indexes[i].Multikey && slices.Contains(names, c.Settings.Indexes[i].Name) {
			c.Settings.Indexes[i].Multikey = true
			changed = true
		}
	}

	if !changed {
		return nil
	}

	q := fmt.Sprintf("UPDATE %q SET settings = ? WHERE table_name = ?", metadataTableName)
	if _, err := db.ExecContext(ctx, q, c.Settings, c.TableName); err != nil {
		return lazyerrors.Error(err)
	}

	r.colls[dbName][collectionName] = c

	return nil
}

// indexColumn is the SQL expression of an index key: `_ferretdb_sjson->>'field'` for a top-level field (the SQL
// value, which queries compare and sort with the same text), FerretDB's JSON path otherwise. The `_id` of the `_id`
// index (its only key) stays the JSON text FerretDB looks `_id` up by; an `_id` beside other keys is the SQL value, so
// that a sort ending in `_id` (the tie-break of a page by time) is read from the index instead of from every row.
func indexColumn(field string, quoted []string, keys int) string {
	if len(quoted) == 1 && (field != "_id" || keys > 1) && simpleField(field) {
		return fmt.Sprintf("%s->>'%s'", DefaultColumn, field)
	}

	return fmt.Sprintf("%s->%s", DefaultColumn, joinPath(quoted))
}

func simpleField(field string) bool {
	for i, r := range field {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}

	return field != ""
}

func joinPath(quoted []string) string {
	res := ""

	for i, q := range quoted {
		if i > 0 {
			res += "->"
		}

		res += q
	}

	return res
}
