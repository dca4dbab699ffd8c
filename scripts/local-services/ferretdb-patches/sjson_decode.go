// handoff-relay patch for FerretDB 1.24.2 (copied into internal/handler/sjson/ at build time).
//
// Upstream decodes a stored document with encoding/json, once per nesting level and once more per scalar (a new
// json.Decoder for each string, number and date), and decodes its whole schema the same way: on the relay's
// threads (5 KB of text, messages and artifacts) that was 40-45% of FerretDB's CPU for a find. This decodes the
// same sjson in one pass per level with a small scanner, guided by the schema, building the same values; anything
// it does not expect (an escape it leaves to encoding/json, a number out of range, an unknown schema key) makes it
// give up and the upstream decoder (unmarshalSlow) answer instead, errors included.
//
// A document stored as FerretDB writes one (its schema first, then its fields in the schema's order) is decoded field
// by field as the scanner meets them (unmarshalInOrder, decodeInOrder); any other layout is split into its keys and
// each field found by key, as before.
//
// UnmarshalFields decodes only some top-level fields (and their schema), skipping the rest as raw text: the
// handler asks for it when a find's projection, filter and sort need nothing else (handler_projection_fields.go).
//
// A schema is parsed once per shape of document, not once per read (sjson_schema_cache.go).

package sjson

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/FerretDB/FerretDB/internal/types"
)

// errFast: the fast decoder met something it leaves to the upstream one.
var errFast = errors.New("sjson: not decoded by the fast path")

// Unmarshal decodes a stored document (see package doc), fast where it can.
func Unmarshal(data []byte) (*types.Document, error) {
	return UnmarshalFields(data, nil)
}

// UnmarshalFields is Unmarshal of the top-level fields in fields only (in the document's order); nil fields: all.
func UnmarshalFields(data []byte, fields map[string]struct{}) (*types.Document, error) {
	if doc, err := fastUnmarshal(data, fields); err == nil {
		return doc, nil
	}

	doc, err := unmarshalSlow(data)
	if err != nil || fields == nil {
		return doc, err
	}

	for _, key := range doc.Keys() {
		if _, wanted := fields[key]; !wanted {
			doc.Remove(key)
		}
	}

	return doc, nil
}

func fastUnmarshal(data []byte, fields map[string]struct{}) (*types.Document, error) {
	if d, ok, err := unmarshalInOrder(data, fields); ok || err != nil {
		return d, err
	}

	keys, raws, err := splitObject(data)
	if err != nil {
		return nil, err
	}

	var rawSchema []byte

	for i, key := range keys {
		if key == "$s" {
			rawSchema = raws[i]
			keys = append(keys[:i:i], keys[i+1:]...)
			raws = append(raws[:i:i], raws[i+1:]...)

			break
		}
	}

	if rawSchema == nil {
		return nil, errFast
	}

	// The schema's keys, and each property's schema, parsed when a read first needs it (sjson_schema_cache.go).
	sch, err := schemas.get(rawSchema)
	if err != nil || len(sch.keys) != len(keys) {
		return nil, errFast
	}

	d := types.MakeDecodedDocument(len(sch.keys))

	for _, key := range sch.keys {
		if fields != nil {
			if _, wanted := fields[key]; !wanted {
				continue
			}
		}

		raw, ok := lookup(keys, raws, key)
		if !ok {
			return nil, errFast
		}

		e, err := sch.elem(key)
		if err != nil {
			return nil, err
		}

		v, err := decodeValue(raw, e)
		if err != nil {
			return nil, err
		}

		d.AppendDecoded(key, v)
	}

	return d, nil
}

// lookup finds the value of key among keys (documents are small: a linear search).
func lookup(keys []string, raws [][]byte, key string) ([]byte, bool) {
	for i, k := range keys {
		if k == key {
			return raws[i], true
		}
	}

	return nil, false
}

// decodeValue is unmarshalSingleValue's fast path.
func decodeValue(raw []byte, e *elem) (any, error) {
	if string(raw) == "null" {
		return types.Null, nil
	}

	if e == nil {
		return nil, errFast
	}

	switch e.Type {
	case elemTypeObject:
		if e.Schema == nil {
			return nil, errFast
		}

		return decodeDocument(raw, e.Schema)
	case elemTypeArray:
		if e.Items == nil {
			return nil, errFast
		}

		items, err := splitArray(raw)
		if err != nil || len(items) != len(e.Items) {
			return nil, errFast
		}

		a := types.MakeArray(len(items))

		for i, item := range items {
			v, err := decodeValue(item, e.Items[i])
			if err != nil {
				return nil, err
			}

			a.Append(v)
		}

		return a, nil
	case elemTypeDouble:
		if !isNumber(raw) {
			return nil, errFast
		}

		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return nil, errFast
		}

		return f, nil
	case elemTypeString:
		return decodeString(raw)
	case elemTypeBinData:
		s, err := decodeString(raw)
		if err != nil || e.Subtype == nil {
			return nil, errFast
		}

		b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))

		n, err := base64.StdEncoding.Decode(b, []byte(s))
		if err != nil {
			return nil, errFast
		}

		return types.Binary{B: b[:n], Subtype: *e.Subtype}, nil
	case elemTypeObjectID:
		s, err := decodeString(raw)
		if err != nil || len(s) != 2*types.ObjectIDLen {
			return nil, errFast
		}

		var id types.ObjectID
		if _, err = hex.Decode(id[:], []byte(s)); err != nil {
			return nil, errFast
		}

		return id, nil
	case elemTypeBool:
		switch string(raw) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	case elemTypeDate:
		ms, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, errFast
		}

		return time.UnixMilli(ms), nil
	case elemTypeRegex:
		s, err := decodeString(raw)
		if err != nil || e.Options == nil {
			return nil, errFast
		}

		return types.Regex{Pattern: s, Options: *e.Options}, nil
	case elemTypeInt:
		i, err := strconv.ParseInt(string(raw), 10, 32)
		if err != nil {
			return nil, errFast
		}

		return int32(i), nil
	case elemTypeTimestamp:
		u, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return nil, errFast
		}

		return types.Timestamp(u), nil
	case elemTypeLong:
		i, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, errFast
		}

		return i, nil
	}

	return nil, errFast
}

// decodeDocument is documentType.UnmarshalJSONWithSchema's fast path.
func decodeDocument(raw []byte, sch *schema) (any, error) {
	if d, ok, err := decodeInOrder(raw, sch); ok || err != nil {
		return d, err
	}

	keys, raws, err := splitObject(raw)
	if err != nil {
		return nil, err
	}

	if len(keys) == 0 {
		return &types.Document{}, nil
	}

	if sch == nil || len(sch.Keys) != len(keys) {
		return nil, errFast
	}

	d := types.MakeDecodedDocument(len(sch.Keys))

	for _, key := range sch.Keys {
		v, ok := lookup(keys, raws, key)
		if !ok {
			return nil, errFast
		}

		value, err := decodeValue(v, sch.Properties[key])
		if err != nil {
			return nil, err
		}

		d.AppendDecoded(key, value)
	}

	return d, nil
}

// unmarshalInOrder is fastUnmarshal for a document stored as FerretDB writes one: its schema first, then its fields
// in the schema's order. It decodes each field as it meets it, with no list of the document's keys and no search in
// it; ok is false, with nothing decoded, when the document is not laid out so (fastUnmarshal then finds each field).
func unmarshalInOrder(data []byte, fields map[string]struct{}) (d *types.Document, ok bool, err error) {
	s := scanner{b: data}
	s.ws()

	if !s.eat('{') {
		return nil, false, nil
	}

	key, rawSchema, found := s.member()
	if !found || !keyIs(key, "$s") {
		return nil, false, nil
	}

	sch, err := schemas.get(rawSchema)
	if err != nil {
		return nil, false, nil
	}

	return fieldsInOrder(&s, sch.keys, true, elemSource{cached: sch}, fields)
}

// decodeInOrder is decodeDocument for a nested document whose fields are in its schema's order (as FerretDB writes
// them), decoded as met; ok is false, with nothing decoded, when they are not (decodeDocument then finds each).
func decodeInOrder(raw []byte, sch *schema) (d *types.Document, ok bool, err error) {
	s := scanner{b: raw}
	s.ws()

	if !s.eat('{') {
		return nil, false, nil
	}

	if s.ws(); s.eat('}') {
		if s.ws(); s.i != len(raw) {
			return nil, false, nil
		}

		return &types.Document{}, true, nil
	}

	if sch == nil || len(sch.Keys) == 0 {
		return nil, false, nil
	}

	return fieldsInOrder(&s, sch.Keys, false, elemSource{props: sch.Properties}, nil)
}

// elemSource is where fieldsInOrder finds each field's schema: a top-level schema from the cache, parsed on first
// use, or a nested document's parsed properties.
type elemSource struct {
	cached *cachedSchema
	props  map[string]*elem
}

func (src elemSource) of(name string) (*elem, error) {
	if src.cached != nil {
		return src.cached.elem(name)
	}

	return src.props[name], nil
}

// fieldsInOrder decodes the rest of the object s is in, one member per key of keys, in their order (after: a member
// came before them, so each is preceded by a comma), the wanted ones only when fields is not nil; ok is false, with
// nothing decoded, when the object holds anything else.
func fieldsInOrder(
	s *scanner, keys []string, after bool, src elemSource, fields map[string]struct{},
) (d *types.Document, ok bool, err error) {
	d = types.MakeDecodedDocument(len(keys))

	for i, name := range keys {
		if s.ws(); (after || i > 0) && !s.eat(',') {
			return nil, false, nil
		}

		key, raw, found := s.member()
		if !found || !keyIs(key, name) {
			return nil, false, nil
		}

		if fields != nil {
			if _, wanted := fields[name]; !wanted {
				continue
			}
		}

		e, err := src.of(name)
		if err != nil {
			return nil, false, err
		}

		v, err := decodeValue(raw, e)
		if err != nil {
			return nil, false, err
		}

		d.AppendDecoded(name, v)
	}

	if !s.closes('}') {
		return nil, false, nil
	}

	return d, true, nil
}

// keyIs: the raw JSON string key (quotes included) is name. A key with an escape in it is not compared (it is not
// always its text): the caller decodes the document the general way.
func keyIs(key []byte, name string) bool {
	return len(key) == len(name)+2 && string(key[1:len(key)-1]) == name && bytes.IndexByte(key, '\\') < 0
}

// splitSchema reads a document's schema: its keys in order, and each property's schema as raw text.
func splitSchema(raw []byte) (keys, names []string, props [][]byte, err error) {
	parts, values, err := splitObject(raw)
	if err != nil {
		return nil, nil, nil, err
	}

	for i, part := range parts {
		switch part {
		case "$k":
			if keys, err = decodeStrings(values[i]); err != nil {
				return nil, nil, nil, err
			}
		case "p":
			if names, props, err = splitObject(values[i]); err != nil {
				return nil, nil, nil, err
			}
		default:
			return nil, nil, nil, errFast
		}
	}

	return keys, names, props, nil
}

// parseSchema is the decoding of a nested document's schema.
func parseSchema(raw []byte) (*schema, error) {
	keys, names, props, err := splitSchema(raw)
	if err != nil {
		return nil, err
	}

	// Fields are added without a search for their key (types_document_decoded.go): keys must be distinct.
	if !distinct(keys) {
		return nil, errFast
	}

	sch := &schema{Keys: keys}

	if names != nil {
		sch.Properties = make(map[string]*elem, len(names))

		for i, name := range names {
			if sch.Properties[name], err = parseElem(props[i]); err != nil {
				return nil, err
			}
		}
	}

	return sch, nil
}

// parseElem is the decoding of one value's schema: {"t": type, "$s": schema, "o": options, "i": items, "s": subtype}.
func parseElem(raw []byte) (*elem, error) {
	if string(raw) == "null" {
		return nil, nil
	}

	parts, values, err := splitObject(raw)
	if err != nil {
		return nil, err
	}

	e := new(elem)

	for i, part := range parts {
		v := values[i]

		switch part {
		case "t":
			s, err := decodeString(v)
			if err != nil {
				return nil, err
			}

			e.Type = elemType(s)
		case "$s":
			if e.Schema, err = parseSchema(v); err != nil {
				return nil, err
			}
		case "o":
			s, err := decodeString(v)
			if err != nil {
				return nil, err
			}

			e.Options = &s
		case "i":
			items, err := splitArray(v)
			if err != nil {
				return nil, err
			}

			e.Items = make([]*elem, len(items))

			for j, item := range items {
				if e.Items[j], err = parseElem(item); err != nil {
					return nil, err
				}
			}
		case "s":
			n, err := strconv.ParseUint(string(v), 10, 8)
			if err != nil {
				return nil, errFast
			}

			subtype := types.BinarySubtype(n)
			e.Subtype = &subtype
		default:
			return nil, errFast
		}
	}

	return e, nil
}

// distinct: no key twice (a schema's keys; parsed once per shape of document, sjson_schema_cache.go).
func distinct(keys []string) bool {
	seen := make(map[string]struct{}, len(keys))

	for _, key := range keys {
		if _, dup := seen[key]; dup {
			return false
		}

		seen[key] = struct{}{}
	}

	return true
}

// decodeStrings decodes a JSON array of strings.
func decodeStrings(raw []byte) ([]string, error) {
	items, err := splitArray(raw)
	if err != nil {
		return nil, err
	}

	res := make([]string, len(items))

	for i, item := range items {
		if res[i], err = decodeString(item); err != nil {
			return nil, err
		}
	}

	return res, nil
}

// isNumber: only the characters of a JSON number (ParseFloat alone would also take "inf", "0x1p3" or "1_0").
func isNumber(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}

	for _, c := range raw {
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			return false
		}
	}

	return raw[0] != '+'
}

// decodeString decodes a JSON string as encoding/json does; surrogate escapes and invalid UTF-8 are left to it.
func decodeString(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", errFast
	}

	body := raw[1 : len(raw)-1]

	plain := true

	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			plain = false
			break
		}
	}

	if plain {
		if !utf8.Valid(body) {
			return "", errFast
		}

		return string(body), nil
	}

	out := make([]byte, 0, len(body))

	for i := 0; i < len(body); i++ {
		c := body[i]

		switch {
		case c == '"' || c < 0x20:
			return "", errFast
		case c != '\\':
			out = append(out, c)
			continue
		}

		i++
		if i >= len(body) {
			return "", errFast
		}

		switch body[i] {
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+4 >= len(body) {
				return "", errFast
			}

			r, err := strconv.ParseUint(string(body[i+1:i+5]), 16, 16)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				return "", errFast
			}

			out = utf8.AppendRune(out, rune(r))
			i += 4
		default:
			return "", errFast
		}
	}

	if !utf8.Valid(out) {
		return "", errFast
	}

	return string(out), nil
}

// splitObject splits a JSON object into its keys and their values' raw text, in order.
func splitObject(raw []byte) ([]string, [][]byte, error) {
	s := scanner{b: raw}
	s.ws()

	if !s.eat('{') {
		return nil, nil, errFast
	}

	var keys []string
	var values [][]byte

	s.ws()

	if !s.eat('}') {
		for {
			rawKey, value, found := s.member()
			if !found {
				return nil, nil, errFast
			}

			key, err := decodeString(rawKey)
			if err != nil {
				return nil, nil, err
			}

			keys = append(keys, key)
			values = append(values, value)

			s.ws()

			if s.eat(',') {
				continue
			}

			if s.eat('}') {
				break
			}

			return nil, nil, errFast
		}
	}

	if s.ws(); s.i != len(raw) {
		return nil, nil, errFast
	}

	return keys, values, nil
}

// splitArray splits a JSON array into its items' raw text.
func splitArray(raw []byte) ([][]byte, error) {
	s := scanner{b: raw}
	s.ws()

	if !s.eat('[') {
		return nil, errFast
	}

	items := [][]byte{}

	s.ws()

	if !s.eat(']') {
		for {
			s.ws()

			start := s.i
			if !s.skipValue() {
				return nil, errFast
			}

			items = append(items, raw[start:s.i])

			s.ws()

			if s.eat(',') {
				continue
			}

			if s.eat(']') {
				break
			}

			return nil, errFast
		}
	}

	if s.ws(); s.i != len(raw) {
		return nil, errFast
	}

	return items, nil
}

// scanner walks JSON text; it finds where values end and leaves checking their content to the decoders.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// member reads the next `"key": value` of an object, after its `{` or a `,`: the key's raw text (quotes included) and
// the value's; found is false when what follows is not one.
func (s *scanner) member() (key, value []byte, found bool) {
	s.ws()

	start := s.i
	if !s.skipString() {
		return nil, nil, false
	}

	key = s.b[start:s.i]

	if s.ws(); !s.eat(':') {
		return nil, nil, false
	}

	s.ws()

	start = s.i
	if !s.skipValue() {
		return nil, nil, false
	}

	return key, s.b[start:s.i], true
}

// closes: what is left is the object's closing c, with nothing after it but whitespace.
func (s *scanner) closes(c byte) bool {
	if s.ws(); !s.eat(c) {
		return false
	}

	s.ws()

	return s.i == len(s.b)
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}

	return false
}

func (s *scanner) skipString() bool {
	if !s.eat('"') {
		return false
	}

	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '\\':
			s.i += 2
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		default:
			s.i++
		}
	}

	return false
}

func (s *scanner) skipValue() bool {
	if s.i >= len(s.b) {
		return false
	}

	switch s.b[s.i] {
	case '"':
		return s.skipString()
	case '{', '[':
		depth := 0

		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.skipString() {
					return false
				}

				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}

			s.i++
		}

		return false
	default:
		start := s.i

		for s.i < len(s.b) {
			c := s.b[s.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}

			s.i++
		}

		return s.i > start
	}
}
