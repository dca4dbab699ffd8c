// handoff-relay patch for FerretDB 1.24.2 (copied into internal/handler/sjson/ at build time).
//
// Upstream encodes a document for storage with a bytes.Buffer per value and per schema element and json.Marshal
// for every scalar (reflection, one allocation each): on the relay's writes of 5 KB threads that was about a tenth
// of FerretDB's CPU. This appends the same bytes to one buffer; a string that needs escaping still goes through
// json.Marshal, and a value it does not expect (NaN or an infinity, which upstream refuses) makes upstream's
// encoder (marshalSlow) answer, errors included. The output is byte for byte upstream's, but for a top-level key that
// needs escaping (appendTopDocument).

package sjson

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// Marshal encodes a document with its schema in the field $s, for storage (see package doc).
func Marshal(d *types.Document) ([]byte, error) {
	if d == nil {
		panic("v is nil")
	}

	if b, ok := appendTopDocument(make([]byte, 0, 1024), d); ok {
		return b, nil
	}

	return marshalSlow(d)
}

// appendTopDocument is upstream's Marshal: the schema first, then each field. Upstream wrote top-level keys as they
// are, unescaped: a key with a quote was refused by SQLite as malformed JSON, and one with a backslash or a control
// character was stored but never read again (every find that met the document failed: "missing key"). Those are
// escaped now (appendTopKey); every other key is written as before, byte for byte.
func appendTopDocument(b []byte, d *types.Document) ([]byte, bool) {
	b = append(b, `{"$s":`...)

	b, ok := appendSchema(b, d)
	if !ok {
		return nil, false
	}

	keys := d.Keys()
	values := d.Values()

	for i, key := range keys {
		b = append(b, ',')
		b = appendTopKey(b, key)
		b = append(b, ':')

		if b, ok = appendValue(b, values[i]); !ok {
			return nil, false
		}
	}

	return append(b, '}'), true
}

// appendSchema is marshalSchemaForDoc.
func appendSchema(b []byte, d *types.Document) ([]byte, bool) {
	keys := d.Keys()
	if len(keys) == 0 {
		return append(b, "{}"...), true
	}

	values := d.Values()

	b = append(b, `{"p":{`...)

	var ok bool

	for i, key := range keys {
		if i > 0 {
			b = append(b, ',')
		}

		b = appendString(b, key)
		b = append(b, ':')

		if b, ok = appendElem(b, values[i]); !ok {
			return nil, false
		}
	}

	b = append(b, `},"$k":[`...)

	for i, key := range keys {
		if i > 0 {
			b = append(b, ',')
		}

		b = appendString(b, key)
	}

	return append(b, "]}"...), true
}

// appendElem is marshalElemForSingleValue.
func appendElem(b []byte, value any) ([]byte, bool) {
	var ok bool

	switch v := value.(type) {
	case *types.Document:
		b = append(b, `{"t":"object","$s":`...)
		if b, ok = appendSchema(b, v); !ok {
			return nil, false
		}

		return append(b, '}'), true
	case *types.Array:
		b = append(b, `{"t":"array","i":[`...)

		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}

			if b, ok = appendElem(b, must.NotFail(v.Get(i))); !ok {
				return nil, false
			}
		}

		return append(b, "]}"...), true
	case float64:
		return append(b, `{"t":"double"}`...), true
	case string:
		return append(b, `{"t":"string"}`...), true
	case types.Binary:
		subtype, err := json.Marshal(v.Subtype)
		if err != nil {
			return nil, false
		}

		b = append(b, `{"t":"binData","s":`...)
		b = append(b, subtype...)

		return append(b, '}'), true
	case types.ObjectID:
		return append(b, `{"t":"objectId"}`...), true
	case bool:
		return append(b, `{"t":"bool"}`...), true
	case time.Time:
		return append(b, `{"t":"date"}`...), true
	case types.NullType:
		return append(b, `{"t":"null"}`...), true
	case types.Regex:
		b = append(b, `{"t":"regex","o":`...)
		b = appendString(b, v.Options)

		return append(b, '}'), true
	case int32:
		return append(b, `{"t":"int"}`...), true
	case types.Timestamp:
		return append(b, `{"t":"timestamp"}`...), true
	case int64:
		return append(b, `{"t":"long"}`...), true
	}

	return nil, false
}

// appendValue is MarshalSingleValue.
func appendValue(b []byte, value any) ([]byte, bool) {
	var ok bool

	switch v := value.(type) {
	case *types.Document:
		b = append(b, '{')

		keys := v.Keys()
		values := v.Values()

		for i, key := range keys {
			if i > 0 {
				b = append(b, ',')
			}

			b = appendString(b, key)
			b = append(b, ':')

			if b, ok = appendValue(b, values[i]); !ok {
				return nil, false
			}
		}

		return append(b, '}'), true
	case *types.Array:
		b = append(b, '[')

		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}

			if b, ok = appendValue(b, must.NotFail(v.Get(i))); !ok {
				return nil, false
			}
		}

		return append(b, ']'), true
	case float64:
		return appendFloat(b, v)
	case string:
		return appendString(b, v), true
	case types.Binary:
		if v.B == nil {
			return append(b, "null"...), true
		}

		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.B)

		return append(b, '"'), true
	case types.ObjectID:
		b = append(b, '"')
		b = hex.AppendEncode(b, v[:])

		return append(b, '"'), true
	case bool:
		return strconv.AppendBool(b, v), true
	case time.Time:
		return strconv.AppendInt(b, v.UnixMilli(), 10), true
	case types.NullType:
		return append(b, "null"...), true
	case types.Regex:
		return appendString(b, v.Pattern), true
	case int32:
		return strconv.AppendInt(b, int64(v), 10), true
	case types.Timestamp:
		return strconv.AppendUint(b, uint64(v), 10), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	}

	return nil, false
}

// appendFloat writes a double as encoding/json does; NaN and infinities (which it refuses) are left to upstream.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}

	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}

	b = strconv.AppendFloat(b, f, format, -1, 64)

	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}

	return b, true
}

// appendTopKey writes a top-level key as upstream did (as it is, quoted), unless it holds what JSON must escape (a
// quote, a backslash, a control character), which upstream left unescaped: then as every other string (appendString).
func appendTopKey(b []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == '"' || c == '\\' {
			return appendString(b, key)
		}
	}

	b = append(b, '"')
	b = append(b, key...)

	return append(b, '"')
}

// appendString writes a string as json.Marshal does: as it is when nothing in it needs escaping, else through it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			if c >= utf8.RuneSelf && plainUTF8(s[i:]) {
				break
			}

			return append(b, must.NotFail(json.Marshal(s))...)
		}
	}

	b = append(b, '"')
	b = append(b, s...)

	return append(b, '"')
}

// plainUTF8: s is valid UTF-8 without U+2028, U+2029 and the ASCII characters json.Marshal escapes.
func plainUTF8(s string) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r == '\u2028', r == '\u2029':
			return false
		case r < utf8.RuneSelf && (r < 0x20 || r == '"' || r == '\\' || r == '<' || r == '>' || r == '&'):
			return false
		}
	}

	return utf8.ValidString(s)
}
