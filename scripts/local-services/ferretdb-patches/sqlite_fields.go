// handoff-relay patch for FerretDB 1.24.2 (copied into internal/backends/sqlite/ at build time).
//
// A query that names its fields (backends.QueryParams.Fields, set by the handler for a find whose projection,
// filter and sort read only those: handler_projection_fields.go) decodes only them from each row
// (sjson.UnmarshalFields).

package sqlite

import "github.com/FerretDB/FerretDB/internal/types"

// withFields makes a query iterator decode only the given top-level fields of each document; nil fields: all.
func withFields(iter types.DocumentsIterator, fields []string) types.DocumentsIterator {
	if q, ok := iter.(*queryIterator); ok && fields != nil {
		q.fields = make(map[string]struct{}, len(fields))
		for _, field := range fields {
			q.fields[field] = struct{}{}
		}
	}

	return iter
}
