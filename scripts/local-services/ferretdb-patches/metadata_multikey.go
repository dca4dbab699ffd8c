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

// indexColumn is the SQL expression of an index key: `_ferretdb_sjson->>'field'` for a top-level field other than
// `_id` (the SQL value, which queries compare with the same text), FerretDB's JSON path otherwise.
func indexColumn(field string, quoted []string) string {
	if len(quoted) == 1 && field != "_id" && simpleField(field) {
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
