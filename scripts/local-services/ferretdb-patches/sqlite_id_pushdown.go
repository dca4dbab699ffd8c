// handoff-relay patch for FerretDB 1.24.2 (copied into internal/backends/sqlite/ at build time).
//
// Upstream pushes a filter down to SQLite only when it is exactly { _id: <string or ObjectID> }; any other filter
// reads and decodes the whole collection in Go. A filter whose top level holds `_id` equality (or `_id: { $in }`)
// beside other conditions ({ _id, version } of a conditional update) selects at most those rows, so this pushes
// that part down as an indexed `_id` lookup; the handler still applies the whole filter to what comes back.

package sqlite

import (
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
)

// idWhereClause returns the WHERE clause and its arguments for the filter's top-level `_id` condition,
// or an empty clause when the filter has none that can be pushed down.
func idWhereClause(filter *types.Document) (string, []any) {
	if filter.Len() == 0 {
		return "", nil
	}

	var seen int

	for _, k := range filter.Keys() {
		if k == "_id" {
			seen++
		}
	}

	if seen != 1 {
		return "", nil
	}

	v, err := filter.Get("_id")
	if err != nil {
		return "", nil
	}

	if arg, ok := idArg(v); ok {
		return fmt.Sprintf(` WHERE %s = ?`, metadata.IDColumn), []any{arg}
	}

	cond, ok := v.(*types.Document)
	if !ok || cond.Len() != 1 || cond.Keys()[0] != "$in" {
		return "", nil
	}

	in, ok := cond.Values()[0].(*types.Array)
	if !ok || in.Len() == 0 {
		return "", nil
	}

	placeholders := make([]string, in.Len())
	args := make([]any, in.Len())

	for i := 0; i < in.Len(); i++ {
		e, _ := in.Get(i)

		arg, ok := idArg(e)
		if !ok {
			return "", nil
		}

		placeholders[i] = "?"
		args[i] = arg
	}

	return fmt.Sprintf(` WHERE %s IN (%s)`, metadata.IDColumn, strings.Join(placeholders, ", ")), args
}

// idArg returns the `_id` column's value for a string or ObjectID.
func idArg(v any) (string, bool) {
	switch v.(type) {
	case string, types.ObjectID:
		b, err := sjson.MarshalSingleValue(v)
		if err != nil {
			return "", false
		}

		return string(b), true
	default:
		return "", false
	}
}
