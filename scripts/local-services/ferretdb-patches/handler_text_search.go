// handoff-relay patch for FerretDB 1.24.2 (copied into internal/handler/ at build time).
//
// Text indexes and `$text` queries, as MongoDB serves them, on the SQLite backend's full-text engine (FTS5;
// backends/sqlite/metadata/metadata_text_index.go builds the index, backends/sqlite/sqlite_text_search.go queries
// it). A collection has at most one text index, on top-level fields holding strings or arrays of strings, created
// with `default_language: "none"` (words as written: no stemming, no stop words; case and accents ignored, as
// MongoDB's version 3 text index does). listIndexes reports it as MongoDB does: key `{ _fts: "text", _ftsx: 1 }`
// and the fields as `weights`.
//
// A find's `$text: { $search }` (top level only) keeps a document that holds, in those fields, every "quoted
// phrase" of the search and at least one of its unquoted words (all of them when there is no phrase), and none of
// its -negated words, as MongoDB does. The handler takes `$text` out of the filter it applies itself and hands
// the search to the backend, which always applies it. Scores (`$meta: "textScore"`) are not served.

package handler

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/handler/common"
	"github.com/FerretDB/FerretDB/internal/handler/handlererrors"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// textField is the shape of a field a text index covers: top level, nothing to quote in SQL.
var textField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// textIndexKey returns the key and the fields of a text index specification (every key value "text"), ok false
// for any other index.
func textIndexKey(command string, keyDoc *types.Document) ([]backends.IndexKeyPair, []string, bool, error) {
	fields := make([]string, 0, keyDoc.Len())

	for _, field := range keyDoc.Keys() {
		v := must.NotFail(keyDoc.Get(field))
		if s, _ := v.(string); s != "text" {
			if len(fields) > 0 {
				return nil, nil, true, handlererrors.NewCommandErrorMsgWithArgument(
					handlererrors.ErrNotImplemented,
					"A text index with other keys than text fields is not implemented",
					command,
				)
			}

			continue
		}

		if !textField.MatchString(field) {
			return nil, nil, true, handlererrors.NewCommandErrorMsgWithArgument(
				handlererrors.ErrNotImplemented,
				fmt.Sprintf("A text index on %q is not implemented (top-level fields only)", field),
				command,
			)
		}

		fields = append(fields, field)
	}

	if len(fields) == 0 {
		return nil, nil, false, nil
	}

	if len(fields) != keyDoc.Len() {
		return nil, nil, true, handlererrors.NewCommandErrorMsgWithArgument(
			handlererrors.ErrNotImplemented,
			"A text index with other keys than text fields is not implemented",
			command,
		)
	}

	return []backends.IndexKeyPair{{Field: "_fts"}, {Field: "_ftsx"}}, fields, true, nil
}

// textIndexOption checks an option of a text index specification: only the defaults this patch serves.
func textIndexOption(command string, indexDoc *types.Document, index *backends.IndexInfo, opt string) error {
	v := must.NotFail(indexDoc.Get(opt))

	served := len(index.Text) > 0
	if served {
		switch opt {
		case "default_language":
			served = v == "none"
		case "weights":
			d, ok := v.(*types.Document)
			served = ok

			for _, k := range d.Keys() {
				if w, _ := must.NotFail(d.Get(k)).(int32); w != 1 {
					served = false
				}
			}
		case "language_override":
			served = v == "language"
		case "textIndexVersion":
			served = v == int32(3) || v == int64(3) || v == float64(3)
		}
	}

	if served {
		return nil
	}

	return handlererrors.NewCommandErrorMsgWithArgument(
		handlererrors.ErrNotImplemented,
		fmt.Sprintf("Index option %s: %s is not implemented (text indexes serve default_language \"none\")",
			opt, types.FormatAnyValue(v)),
		command,
	)
}

// textIndexKeyDocument is a text index's key as listIndexes reports it.
func textIndexKeyDocument() *types.Document {
	return must.NotFail(types.NewDocument("_fts", "text", "_ftsx", int32(1)))
}

// addTextIndexFields adds what listIndexes reports of a text index beside its key.
func addTextIndexFields(indexDoc *types.Document, fields []string) {
	if len(fields) == 0 {
		return
	}

	weights := new(types.Document)
	for _, f := range fields {
		weights.Set(f, int32(1))
	}

	indexDoc.Set("key", textIndexKeyDocument())
	indexDoc.Set("weights", weights)
	indexDoc.Set("default_language", "none")
	indexDoc.Set("language_override", "language")
	indexDoc.Set("textIndexVersion", int32(3))
}

// takeTextSearch takes a top-level `$text` out of the find's filter and returns its search as an FTS5 query,
// or "" when the filter has none.
func takeTextSearch(ctx context.Context, coll backends.Collection, params *common.FindParams) (string, error) {
	if params.Filter == nil || !params.Filter.Has("$text") {
		return "", nil
	}

	text, ok := must.NotFail(params.Filter.Get("$text")).(*types.Document)
	if !ok {
		return "", handlererrors.NewCommandErrorMsgWithArgument(
			handlererrors.ErrBadValue, "$text expects an object", "find",
		)
	}

	search, err := common.GetRequiredParam[string](text, "$search")
	if err != nil {
		return "", handlererrors.NewCommandErrorMsgWithArgument(
			handlererrors.ErrBadValue, "$search required and must be a string", "find",
		)
	}

	for _, k := range text.Keys() {
		v := must.NotFail(text.Get(k))

		switch {
		case k == "$search":
		case k == "$language" && v == "none":
		case (k == "$caseSensitive" || k == "$diacriticSensitive") && v == false:
		default:
			return "", handlererrors.NewCommandErrorMsgWithArgument(
				handlererrors.ErrNotImplemented,
				fmt.Sprintf("$text option %s: %s is not implemented", k, types.FormatAnyValue(v)),
				"find",
			)
		}
	}

	indexes, err := coll.ListIndexes(ctx, new(backends.ListIndexesParams))
	if err != nil && !backends.ErrorCodeIs(err, backends.ErrorCodeCollectionDoesNotExist) {
		return "", err
	}

	var indexed bool

	if indexes != nil {
		for _, index := range indexes.Indexes {
			indexed = indexed || len(index.Text) > 0
		}
	}

	if !indexed {
		return "", handlererrors.NewCommandErrorMsgWithArgument(
			handlererrors.ErrIndexNotFound, "text index required for $text query", "find",
		)
	}

	params.Filter = params.Filter.DeepCopy()
	params.Filter.Remove("$text")

	query := ftsQuery(search)
	if query == "" {
		// Nothing to find (no word, or only negated ones): no document, as MongoDB answers.
		params.Filter.Set("_id", must.NotFail(types.NewDocument("$in", types.MakeArray(0))))
	}

	return query, nil
}

// ftsQuery is MongoDB's `$search` as an FTS5 query: every phrase, at least one word (all when there is no
// phrase), no negated term. A search with nothing to find matches no document.
func ftsQuery(search string) string {
	var phrases, words, negated []string

	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

	for rest := search; rest != ""; {
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest == "" {
			break
		}

		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				end = len(rest) - 1
			}

			if p := strings.TrimSpace(rest[1 : 1+end]); p != "" {
				phrases = append(phrases, quote(p))
			}

			rest = rest[min(len(rest), end+2):]

			continue
		}

		end := strings.IndexAny(rest, " \t\r\n\"")
		if end < 0 {
			end = len(rest)
		}

		word := rest[:end]
		rest = rest[end:]

		if strings.HasPrefix(word, "-") {
			if w := strings.TrimLeft(word, "-"); w != "" {
				negated = append(negated, quote(w))
			}

			continue
		}

		words = append(words, quote(word))
	}

	var query string

	switch {
	case len(phrases) > 0:
		query = strings.Join(phrases, " AND ")
	case len(words) > 0:
		query = "(" + strings.Join(words, " OR ") + ")"
	default:
		return ""
	}

	for _, n := range negated {
		query += " NOT " + n
	}

	return query
}
