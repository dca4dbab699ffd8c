// handoff-relay patch for FerretDB 1.24.2 (copied into internal/types/ at build time).
//
// The fast decoder of stored documents (internal/handler/sjson, sjson_decode.go) builds each document from a schema
// whose keys it has checked are distinct, so it adds fields without Set's search of the fields already there: on a
// thread of 45 fields, Set's searches were 1,000 key comparisons a read, and a twelfth of an `_id` find's CPU.

package types

// MakeDecodedDocument is MakeDocument for AppendDecoded: room for capacity fields (at least one).
func MakeDecodedDocument(capacity int) *Document {
	return MakeDocument(max(capacity, 1))
}

// AppendDecoded adds a field whose key the document does not hold (the caller knows; Set would search for it),
// to a document made by MakeDecodedDocument.
func (d *Document) AppendDecoded(key string, value any) {
	d.keys[key]++
	d.fields = append(d.fields, field{key: key, value: value})
}
