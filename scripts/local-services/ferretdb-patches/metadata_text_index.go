// handoff-relay patch for FerretDB 1.24.2 (copied into internal/backends/sqlite/metadata/ at build time).
//
// A text index (../../../handler/handler_text_search.go) is an FTS5 table beside the collection's table, holding
// for each row (by rowid) the words of the index's fields; triggers keep it in step with every insert, update and
// delete of the collection, in the same transaction. FTS5 writes each transaction's words as one new segment and
// merges segments as it goes, so a document's words cost a few pages, not one index entry each.

package metadata

import (
	"context"
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/util/fsql"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// TextIndexTable is the FTS5 table of a collection's text index.
func TextIndexTable(table string) string {
	return table + "_fts"
}

// textWords is the SQL text of the index's fields of the row `row`: each string, or each string of an array.
func textWords(row string, fields []string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = fmt.Sprintf("SELECT value FROM json_each(%s.%s, '$.%s')", row, DefaultColumn, f)
	}

	return fmt.Sprintf(
		"(SELECT group_concat(value, char(10)) FROM (%s) WHERE typeof(value) = 'text')",
		strings.Join(parts, " UNION ALL "),
	)
}

// createTextIndex builds the text index of `fields` for the table's rows, and the triggers that keep it.
func createTextIndex(ctx context.Context, db *fsql.DB, table string, fields []string) error {
	fts := TextIndexTable(table)
	q := fmt.Sprintf(
		`CREATE VIRTUAL TABLE %[2]q USING fts5(words, content='', contentless_delete=1, `+
			`tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER %[3]q AFTER INSERT ON %[1]q BEGIN
  INSERT INTO %[2]q(rowid, words) VALUES (new.rowid, %[6]s);
END;
CREATE TRIGGER %[4]q AFTER DELETE ON %[1]q BEGIN
  DELETE FROM %[2]q WHERE rowid = old.rowid;
END;
CREATE TRIGGER %[5]q AFTER UPDATE ON %[1]q BEGIN
  DELETE FROM %[2]q WHERE rowid = old.rowid;
  INSERT INTO %[2]q(rowid, words) VALUES (new.rowid, %[6]s);
END;
INSERT INTO %[2]q(rowid, words) SELECT rowid, %[7]s FROM %[1]q;`,
		table, fts, fts+"_insert", fts+"_delete", fts+"_update",
		textWords("new", fields), textWords(fmt.Sprintf("%q", table), fields),
	)

	if _, err := db.ExecContext(ctx, q); err != nil {
		_, _ = db.ExecContext(ctx, dropTextIndexSQL(table))
		return lazyerrors.Error(err)
	}

	return nil
}

// dropTextIndexSQL drops a text index: its triggers, then its table.
func dropTextIndexSQL(table string) string {
	fts := TextIndexTable(table)

	return fmt.Sprintf(
		"DROP TRIGGER IF EXISTS %q; DROP TRIGGER IF EXISTS %q; DROP TRIGGER IF EXISTS %q; DROP TABLE IF EXISTS %q;",
		fts+"_insert", fts+"_delete", fts+"_update", fts,
	)
}
