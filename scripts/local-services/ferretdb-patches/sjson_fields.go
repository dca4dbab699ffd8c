// handoff-relay patch for FerretDB 1.24.2 (copied into internal/handler/sjson/ at build time).
//
// Unmarshal decodes every field of a stored document, with its schema, into FerretDB's types, however little of it
// the query returns: a list page of the relay's threads (about 5 KB each, most of it messages and artifacts) spent
// most of FerretDB's CPU there while the page projected ten small fields. UnmarshalFields decodes only the named
// top-level fields (their schema too) and skips the rest as raw JSON; the handler asks for it only when a find's
// projection, filter and sort need nothing else (handler_projection_fields.go).

package sjson

import (
	"encoding/json"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// UnmarshalFields is Unmarshal of the top-level fields in fields only (in the document's order); nil fields: all.
func UnmarshalFields(data []byte, fields map[string]struct{}) (*types.Document, error) {
	if fields == nil {
		return Unmarshal(data)
	}

	var v map[string]json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, lazyerrors.Error(err)
	}

	jsch, ok := v["$s"]
	if !ok {
		return nil, lazyerrors.Errorf("schema is not set")
	}

	var sch struct {
		Properties map[string]json.RawMessage `json:"p"`
		Keys       []string                   `json:"$k"`
	}
	if err := json.Unmarshal(jsch, &sch); err != nil {
		return nil, lazyerrors.Error(err)
	}

	if len(sch.Keys) != len(v)-1 {
		return nil, lazyerrors.Errorf(
			"sjson.UnmarshalFields: the data must have the same number of schema keys and document fields (keys: %d, fields: %d)",
			len(sch.Keys), len(v)-1,
		)
	}

	d := must.NotFail(types.NewDocument())

	for _, key := range sch.Keys {
		if _, wanted := fields[key]; !wanted {
			continue
		}

		b, ok := v[key]
		if !ok {
			return nil, lazyerrors.Errorf("sjson.UnmarshalFields: missing key %q", key)
		}

		var e *elem

		if raw, ok := sch.Properties[key]; ok {
			e = new(elem)
			if err := json.Unmarshal(raw, e); err != nil {
				return nil, lazyerrors.Error(err)
			}
		}

		value, err := unmarshalSingleValue(b, e)
		if err != nil {
			return nil, lazyerrors.Error(err)
		}

		d.Set(key, value)
	}

	return d, nil
}
