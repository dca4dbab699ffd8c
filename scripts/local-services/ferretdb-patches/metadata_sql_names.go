// handoff-relay patch for FerretDB 1.24.2 (copied into internal/backends/sqlite/metadata/ at build time).
//
// Upstream wrote a client's index names and the fields of an index's key into SQL with Go's %q, which escapes a
// double quote with a backslash where SQL doubles it: a quote in either ended the identifier early, so an index on
// a field holding one failed with a syntax error, and a crafted name or field ran SQL of the client's choosing
// (`createIndexes` with the key `x\") ; CREATE TABLE t (a) ; --`, named after it as drivers do, created table t).
// sqlIdent quotes the way SQL does; for a name without a double quote, a backslash or a character Go escapes, it is
// the same text as %q, so the indexes already built keep their names and expressions.

package metadata

import "strings"

// sqlIdent is name as an SQL identifier (or, after `->`, a JSON key SQLite reads as a string).
func sqlIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
