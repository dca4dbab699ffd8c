// handoff-relay patch for FerretDB 1.24.2 (copied into internal/backends/sqlite/ at build time).
//
// Upstream pushes a filter down to SQLite only when it is exactly { _id: <string or ObjectID> }, and never a sort
// or a limit beside a filter: any other query reads and decodes the whole collection in Go. This pushes down what
// the collection's indexes can serve, so that SQLite answers it from an index:
//
//   - `_id` equality and `_id: { $in }` (strings, ObjectIDs), through the `_id` index;
//   - equality, `$eq`, `$in` and the ranges `$gt`, `$gte`, `$lt`, `$lte` on a top-level field that is a key of a
//     secondary index that is not multikey, for strings, finite numbers and dates, and the same on `_id` strings;
//   - `$and` of such conditions, and `$or` of such conjunctions;
//   - a sort on such fields (and `_id`); and the limit (plus the skip), when the whole filter and the whole sort
//     were pushed down, so that SQLite returns exactly the documents the query asks for.
//
// The handler still applies the whole filter, sort, skip and limit to what comes back, so a condition that is not
// pushed down only costs reading more rows. Secondary indexes are built on `_ferretdb_sjson->>'field'` (the SQL
// value: TEXT for a string, INTEGER or REAL for a number, INTEGER milliseconds for a date, so that SQLite orders
// them as BSON does within each type) and queries use the same expression text, so SQLite uses the index.
//
// MongoDB matches `{ f: v }` against each element of an array in `f`; an expression index cannot. So an index on a
// field that holds an array in any document is marked multikey (in the collection's settings, before the write that
// stores the array, and at index creation when a document already has one), and serves no query as an expression
// index. A multikey index of one top-level field has a table of the strings the field holds, alone or in its arrays
// (metadata/metadata_multikey.go): equality, `$in` and the ranges on strings find their rows there, each condition
// on its own (MongoDB lets different elements meet a range's two bounds), and the handler checks the documents.
//
// One limit of this design: within one field, SQLite compares numbers, dates and booleans alike, and strings and
// ObjectIDs alike, where MongoDB would not compare them at all. A field that holds values of two such types can
// then make a pushed-down limit return fewer documents than MongoDB would. handoff-relay stores one type per field.

package sqlite

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// pushdownField is the shape of a field name this pushes down: no dots, no `$`, nothing to quote in SQL.
var pushdownField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// pushdown is what of a query goes to SQLite.
type pushdown struct {
	where   string
	args    []any
	orderBy string
	// exact: the WHERE clause selects exactly the documents of the filter, and orderBy is the whole sort.
	exact bool
}

// fieldExpr is the SQL expression of a top-level field, the same text as its secondary index.
func fieldExpr(field string) string {
	return fmt.Sprintf("%s->>'%s'", metadata.DefaultColumn, field)
}

// servedFields are the fields the collection's indexes serve: by their SQL value, or through a table of elements.
type servedFields struct {
	indexed  map[string]bool
	elements map[string]string // field: its elements table, quoted
}

// planPushdown returns what of filter and sort the collection's indexes can serve.
func planPushdown(meta *metadata.Collection, filter, sort *types.Document) pushdown {
	indexed := map[string]bool{"_id": true}
	elements := map[string]string{}

	for _, index := range meta.Settings.Indexes {
		if field, ok := metadata.ElementsField(index); ok && index.Multikey && index.ElementsTable != "" {
			elements[field] = metadata.QuoteIdent(index.ElementsTable)
		}

		if index.Multikey || len(index.Text) > 0 {
			continue
		}

		for _, key := range index.Key {
			if pushdownField.MatchString(key.Field) {
				indexed[key.Field] = true
			}
		}
	}

	var p pushdown

	conds, args, exact := conjunction(filter, servedFields{indexed, elements})
	if len(conds) > 0 {
		p.where = " WHERE " + strings.Join(conds, " AND ")
		p.args = args
	}

	orderBy, sortExact := orderByClause(sort, indexed)
	p.orderBy = orderBy
	p.exact = exact && sortExact

	return p
}

// tail is the ORDER BY and LIMIT of a pushed-down query (Query and Explain alike) when the handler sorts nothing
// itself (sort, its own, is empty): the pushed-down order, and indexLimit when the whole filter and sort went down
// and the handler set no limit of its own; sorted and limited say which of them it holds.
func (p pushdown) tail(sort *types.Document, limit, indexLimit int64) (clause string, args []any, sorted, limited bool) {
	if sort.Len() != 0 {
		return "", nil, false, false
	}

	clause, sorted = p.orderBy, p.orderBy != ""

	if p.exact && indexLimit > 0 && limit == 0 {
		clause += ` LIMIT ?`
		args, limited = []any{indexLimit}, true
	}

	return clause, args, sorted, limited
}

// conjunction translates the top-level conditions of filter; exact is false when any condition was left out.
func conjunction(filter *types.Document, fields servedFields) (conds []string, args []any, exact bool) {
	exact = true

	if filter.Len() == 0 {
		return nil, nil, true
	}

	keys := filter.Keys()
	values := filter.Values()
	seen := make(map[string]bool, len(keys))

	for i, key := range keys {
		if seen[key] {
			// a duplicated key: leave it all to the handler
			return nil, nil, false
		}

		seen[key] = true

		switch key {
		case "$comment":
			continue

		case "$and", "$or":
			arr, ok := values[i].(*types.Array)
			if !ok || arr.Len() == 0 {
				exact = false
				continue
			}

			var parts []string
			var partArgs []any
			all := true

			for j := 0; j < arr.Len(); j++ {
				e, _ := arr.Get(j)

				doc, ok := e.(*types.Document)
				if !ok {
					all = false
					break
				}

				c, a, ex := conjunction(doc, fields)
				if key == "$or" && (!ex || len(c) == 0) {
					// a branch that is not pushed down entirely makes the whole $or unknown
					all = false
					break
				}

				if !ex {
					exact = false
				}

				if len(c) > 0 {
					parts = append(parts, "("+strings.Join(c, " AND ")+")")
					partArgs = append(partArgs, a...)
				}
			}

			if !all {
				exact = false
				continue
			}

			if len(parts) == 0 {
				continue
			}

			if key == "$or" {
				conds = append(conds, "("+strings.Join(parts, " OR ")+")")
			} else {
				conds = append(conds, parts...)
			}

			args = append(args, partArgs...)

		default:
			if table, ok := fields.elements[key]; ok {
				c, a := elementConditions(table, values[i])
				conds = append(conds, c...)
				args = append(args, a...)
				exact = false

				continue
			}

			if !fields.indexed[key] {
				exact = false
				continue
			}

			c, a, ex := fieldConditions(key, values[i])
			conds = append(conds, c...)
			args = append(args, a...)

			if !ex {
				exact = false
			}
		}
	}

	return conds, args, exact
}

// fieldConditions translates one field's condition: a scalar, or a document of operators.
func fieldConditions(field string, v any) (conds []string, args []any, exact bool) {
	if ops, ok := v.(*types.Document); ok {
		keys := ops.Keys()
		if len(keys) == 0 || !strings.HasPrefix(keys[0], "$") {
			// equality with an embedded document
			return nil, nil, false
		}

		exact = true

		for i, op := range keys {
			c, a, ok := operatorCondition(field, op, ops.Values()[i])
			if !ok {
				exact = false
				continue
			}

			conds = append(conds, c)
			args = append(args, a...)
		}

		return conds, args, exact
	}

	c, a, ok := operatorCondition(field, "$eq", v)
	if !ok {
		return nil, nil, false
	}

	return []string{c}, a, true
}

// elementConditions translates the conditions on strings of one field's condition for its elements table: rows
// holding an element that meets each, every other condition left to the handler.
func elementConditions(table string, v any) (conds []string, args []any) {
	keys, values := []string{"$eq"}, []any{v}

	if ops, ok := v.(*types.Document); ok {
		keys, values = ops.Keys(), ops.Values()
		if len(keys) == 0 || !strings.HasPrefix(keys[0], "$") {
			// equality with an embedded document
			return nil, nil
		}
	}

	sqlOps := map[string]string{"$eq": "=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
	str := func(e any) (any, bool) { s, ok := e.(string); return s, ok }

	for i, op := range keys {
		var cond string
		var a []any

		if sqlOp, ok := sqlOps[op]; ok {
			s, ok := str(values[i])
			if !ok {
				continue
			}

			cond, a = "v "+sqlOp+" ?", []any{s}
		} else if op == "$in" {
			var ok bool
			if a, ok = inArgs(values[i], str); !ok {
				continue
			}

			cond = fmt.Sprintf("v IN (%s)", placeholders(len(a)))
		} else {
			continue
		}

		conds = append(conds, fmt.Sprintf("rowid IN (SELECT rid FROM %s WHERE %s)", table, cond))
		args = append(args, a...)
	}

	return conds, args
}

// operatorCondition translates `field: { op: v }`.
func operatorCondition(field, op string, v any) (string, []any, bool) {
	if field == "_id" && (op == "$eq" || op == "$in") {
		// through the `_id` index, whose expression is the JSON text
		return idCondition(op, v)
	}

	switch op {
	case "$eq", "$gt", "$gte", "$lt", "$lte":
		arg, ok := sqlValue(field, v)
		if !ok {
			return "", nil, false
		}

		sqlOp := map[string]string{"$eq": "=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[op]

		return fmt.Sprintf("%s %s ?", fieldExpr(field), sqlOp), []any{arg}, true

	case "$in":
		args, ok := inArgs(v, func(e any) (any, bool) { return sqlValue(field, e) })
		if !ok {
			return "", nil, false
		}

		return fmt.Sprintf("%s IN (%s)", fieldExpr(field), placeholders(len(args))), args, true

	default:
		return "", nil, false
	}
}

// idCondition is `_id` equality or `$in` on the `_id` index (strings and ObjectIDs).
func idCondition(op string, v any) (string, []any, bool) {
	if op == "$eq" {
		arg, ok := idArg(v)
		if !ok {
			return "", nil, false
		}

		return fmt.Sprintf("%s = ?", metadata.IDColumn), []any{arg}, true
	}

	args, ok := inArgs(v, func(e any) (any, bool) { return idArg(e) })
	if !ok {
		return "", nil, false
	}

	return fmt.Sprintf("%s IN (%s)", metadata.IDColumn, placeholders(len(args))), args, true
}

// inArgs converts each element of a non-empty `$in` array, or fails when one does not convert.
func inArgs(v any, convert func(any) (any, bool)) ([]any, bool) {
	arr, ok := v.(*types.Array)
	if !ok || arr.Len() == 0 {
		return nil, false
	}

	args := make([]any, arr.Len())

	for i := 0; i < arr.Len(); i++ {
		e, _ := arr.Get(i)

		if args[i], ok = convert(e); !ok {
			return nil, false
		}
	}

	return args, true
}

// idArg returns the `_id` index's value (JSON text) for a string or ObjectID.
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

// sqlValue returns what `->>` gives for v in a stored document, for the types this pushes down.
func sqlValue(field string, v any) (any, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case int32:
		if field == "_id" {
			return nil, false
		}

		return int64(v), true
	case int64:
		if field == "_id" {
			return nil, false
		}

		return v, true
	case float64:
		if field == "_id" || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false
		}

		return v, true
	case time.Time:
		if field == "_id" {
			return nil, false
		}

		return v.UnixMilli(), true
	default:
		return nil, false
	}
}

// orderByClause is the ORDER BY of sort when every key is pushed down; exact is false when it is not.
func orderByClause(sort *types.Document, indexed map[string]bool) (string, bool) {
	if sort.Len() == 0 {
		return "", true
	}

	keys := sort.Keys()
	terms := make([]string, len(keys))

	for i, key := range keys {
		if !indexed[key] {
			return "", false
		}

		var dir int64

		switch d := sort.Values()[i].(type) {
		case int32:
			dir = int64(d)
		case int64:
			dir = d
		case float64:
			dir = int64(d)
		default:
			return "", false
		}

		terms[i] = fieldExpr(key)

		switch dir {
		case 1:
		case -1:
			terms[i] += " DESC"
		default:
			return "", false
		}
	}

	return " ORDER BY " + strings.Join(terms, ", "), true
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// multikeyIndexes returns the names of the collection's indexes that are not marked multikey yet but would be
// after docs are stored: one of their fields holds an array. Every write asks, so each document's fields are read
// once (Keys and Values copy them), not once per index key.
func multikeyIndexes(meta *metadata.Collection, docs []*types.Document) []string {
	arrays := map[string]struct{}{}

	for _, doc := range docs {
		keys, values := doc.Keys(), doc.Values()

		for i, value := range values {
			if _, ok := value.(*types.Array); ok {
				arrays[keys[i]] = struct{}{}
			}
		}
	}

	var names []string

	for _, index := range meta.Settings.Indexes {
		if index.Multikey || index.Name == "_id_" {
			continue
		}

		for _, key := range index.Key {
			head, _, _ := strings.Cut(key.Field, ".")

			if _, ok := arrays[head]; ok {
				names = append(names, index.Name)
				break
			}
		}
	}

	return names
}

// markMultikeyOnCreate marks the collection's new indexes multikey where a stored document already holds an array
// in one of their fields (one scan per index, at creation).
func (c *collection) markMultikeyOnCreate(ctx context.Context, indexes []metadata.IndexInfo) error {
	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	meta := c.r.CollectionGet(ctx, c.dbName, c.name)

	if db == nil || meta == nil {
		return nil
	}

	var names []string

	for _, index := range indexes {
		if index.Name == "_id_" {
			continue
		}

		for _, key := range index.Key {
			head, _, _ := strings.Cut(key.Field, ".")
			q := fmt.Sprintf(`SELECT 1 FROM %q WHERE json_type(%s, ?) = 'array' LIMIT 1`, meta.TableName, metadata.DefaultColumn)

			rows, err := db.QueryContext(ctx, q, `$."`+strings.ReplaceAll(head, `"`, `\"`)+`"`)
			if err != nil {
				return lazyerrors.Error(err)
			}

			found := rows.Next()
			err = rows.Err()
			rows.Close()

			if err != nil {
				return lazyerrors.Error(err)
			}

			if found {
				names = append(names, index.Name)
				break
			}
		}
	}

	if len(names) == 0 {
		return nil
	}

	return c.r.IndexesSetMultikey(ctx, c.dbName, c.name, names)
}
