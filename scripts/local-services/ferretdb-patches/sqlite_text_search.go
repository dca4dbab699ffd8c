// handoff-relay patch for FerretDB 1.24.2 (copied into internal/backends/sqlite/ at build time).
//
// A `$text` search (../../handler/handler_text_search.go) is one more condition of the pushed-down WHERE clause:
// the rows its text index (metadata/metadata_text_index.go) matches. The handler does not check it again, so it
// applies whether or not the rest of the filter was pushed down.

package sqlite

import (
	"fmt"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
)

// withTextSearch adds the rows matching the FTS5 query `search` ("" for none) to the pushed-down conditions.
func withTextSearch(meta *metadata.Collection, pushed pushdown, search string) pushdown {
	if search == "" {
		return pushed
	}

	fts := metadata.TextIndexTable(meta.TableName)
	cond := fmt.Sprintf("rowid IN (SELECT rowid FROM %[1]q WHERE %[1]q MATCH ?)", fts)

	if pushed.where == "" {
		pushed.where = " WHERE " + cond
	} else {
		pushed.where = " WHERE " + cond + " AND" + pushed.where[len(" WHERE"):]
	}

	pushed.args = append([]any{search}, pushed.args...)

	return pushed
}
