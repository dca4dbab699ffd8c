// handoff-relay patch for FerretDB 1.24.2 (copied into internal/handler/ at build time).
//
// A find's projection is applied by the handler after the backend decoded whole documents (sjson_decode.go says
// what that cost). When the projection only includes fields, this names the top-level fields the rest of the find
// reads — the projection's, the filter's (through $and, $or and $nor) and the sort's — so the backend decodes only
// those. Anything it does not understand (a projection operator, an exclusion, a filter operator at the top level
// such as $expr, a $natural sort) leaves the find as upstream runs it: whole documents.

package handler

import (
	"strings"

	"github.com/FerretDB/FerretDB/internal/types"
)

// projectedFields returns the top-level fields a find with this projection, filter and sort reads, or nil for all.
func projectedFields(projection, filter, sort *types.Document) []string {
	if projection.Len() == 0 {
		return nil
	}

	fields := map[string]struct{}{"_id": {}}

	iter := projection.Iterator()
	defer iter.Close()

	for {
		key, value, err := iter.Next()
		if err != nil {
			break
		}

		if !includes(value) {
			if key == "_id" {
				continue // {_id: 0} beside inclusions
			}

			return nil
		}

		if !addField(fields, key) {
			return nil
		}
	}

	if !addFilterFields(fields, filter) {
		return nil
	}

	for _, key := range sort.Keys() {
		if !addField(fields, key) {
			return nil
		}
	}

	res := make([]string, 0, len(fields))
	for field := range fields {
		res = append(res, field)
	}

	return res
}

// includes reports whether a projection value includes its field (true or a non-zero number).
func includes(value any) bool {
	switch v := value.(type) {
	case bool:
		return v
	case int32:
		return v != 0
	case int64:
		return v != 0
	case float64:
		return v != 0
	default:
		return false
	}
}

// addField adds the top-level field of a path; false when the path is not a plain one.
func addField(fields map[string]struct{}, path string) bool {
	top, _, _ := strings.Cut(path, ".")
	if top == "" || strings.Contains(path, "$") {
		return false
	}

	fields[top] = struct{}{}

	return true
}

// addFilterFields adds the top-level fields a filter reads; false when it has a top-level operator this does not know.
func addFilterFields(fields map[string]struct{}, filter *types.Document) bool {
	if filter == nil {
		return true
	}

	iter := filter.Iterator()
	defer iter.Close()

	for {
		key, value, err := iter.Next()
		if err != nil {
			return true
		}

		switch key {
		case "$and", "$or", "$nor":
			conds, ok := value.(*types.Array)
			if !ok {
				return false
			}

			for i := 0; i < conds.Len(); i++ {
				cond, _ := conds.Get(i)

				doc, ok := cond.(*types.Document)
				if !ok || !addFilterFields(fields, doc) {
					return false
				}
			}
		default:
			if !addField(fields, key) {
				return false
			}
		}
	}
}

// explainProjectionPushdown: whether the explained find (its command document) decodes only the fields it reads.
func explainProjectionPushdown(command, filter, sort *types.Document) bool {
	projection, _ := command.Get("projection")
	doc, _ := projection.(*types.Document)

	return projectedFields(doc, filter, sort) != nil
}
