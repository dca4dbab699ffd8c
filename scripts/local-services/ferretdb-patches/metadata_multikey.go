// handoff-relay patch for FerretDB 1.24.2 (copied into internal/backends/sqlite/metadata/ at build time).
//
// Marks indexes multikey: one of their fields holds an array in some document, which an expression index cannot
// serve as MongoDB does (matching each element). The mark is kept in the collection's settings, as the index itself
// is. A multikey index of one top-level field gets a table of its elements as it is marked: a row (element, rowid)
// for each string the field holds, alone or in an array, kept by triggers in the same transaction as every insert,
// update and delete of the collection, as a text index is (metadata_text_index.go); the SQLite backend finds a
// field's element there (../sqlite_index_pushdown.go). Any other multikey index serves no query.

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
		index := &c.Settings.Indexes[i]
		if index.Multikey || !slices.Contains(names, index.Name) {
			continue
		}

		if field, ok := ElementsField(*index); ok {
			elements := c.TableName + "_elements_" + index.Name
			q := createElementsSQL(c.TableName, field, elements, c.TableName+"_elements_of_"+index.Name)

			if _, err := db.ExecContext(ctx, q); err != nil {
				return lazyerrors.Error(err)
			}

			index.ElementsTable = elements
		}

		index.Multikey = true
		changed = true
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

// ElementsField is the field of an index that can have a table of its elements: its one key, a top-level field.
func ElementsField(index IndexInfo) (string, bool) {
	if len(index.Key) != 1 || index.Key[0].Field == "_id" || !simpleField(index.Key[0].Field) {
		return "", false
	}

	return index.Key[0].Field, true
}

// QuoteIdent is a name as SQL quotes it (metadata_sql_names.go).
func QuoteIdent(name string) string {
	return sqlIdent(name)
}

// createElementsSQL creates the table `elements` of the strings field holds, alone or in an array, each with its
// row's rowid, under the SQLite index `indexName` (a query plan shows it); the triggers that keep it; and fills it from
// the rows already there (a row written meanwhile may be in it twice, which a lookup of rowids does not mind).
func createElementsSQL(table, field, elements, indexName string) string {
	name := func(suffix string) string { return sqlIdent(elements + suffix) }
	// The elements of `row`; `from` names the row's table (a trigger's row needs none).
	rows := func(from, row string) string {
		return fmt.Sprintf(
			"SELECT e.value, %[2]s.rowid FROM %[1]sjson_each(%[2]s.%[3]s, '$.%[4]s') AS e WHERE e.type = 'text'",
			from, row, DefaultColumn, field,
		)
	}

	return fmt.Sprintf(
		`CREATE TABLE IF NOT EXISTS %[2]s (v, rid INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS %[3]s ON %[2]s (v, rid);
CREATE TRIGGER IF NOT EXISTS %[4]s AFTER INSERT ON %[1]q BEGIN
  INSERT INTO %[2]s (v, rid) %[7]s;
END;
CREATE TRIGGER IF NOT EXISTS %[5]s AFTER DELETE ON %[1]q BEGIN
  DELETE FROM %[2]s WHERE rid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS %[6]s AFTER UPDATE ON %[1]q BEGIN
  DELETE FROM %[2]s WHERE rid = old.rowid;
  INSERT INTO %[2]s (v, rid) %[7]s;
END;
INSERT INTO %[2]s (v, rid) %[8]s;`,
		table, name(""), sqlIdent(indexName),
		name("_insert"), name("_delete"), name("_update"),
		rows("", "new"), rows(fmt.Sprintf("%q AS t, ", table), "t"),
	)
}

// dropElementsSQL drops the elements table of an index, if it has one, and its triggers ("" if none).
func dropElementsSQL(index IndexInfo) string {
	if index.ElementsTable == "" {
		return ""
	}

	name := func(suffix string) string { return sqlIdent(index.ElementsTable + suffix) }

	return fmt.Sprintf(
		" DROP TRIGGER IF EXISTS %s; DROP TRIGGER IF EXISTS %s; DROP TRIGGER IF EXISTS %s; DROP TABLE IF EXISTS %s;",
		name("_insert"), name("_delete"), name("_update"), name(""),
	)
}

// dropIndexTablesSQL drops the tables beside a collection's table that its indexes keep: text and elements.
func dropIndexTablesSQL(c *Collection) string {
	q := dropTextIndexSQL(c.TableName)

	for _, index := range c.Settings.Indexes {
		q += dropElementsSQL(index)
	}

	return q
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
