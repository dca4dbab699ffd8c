// handoff-relay patch for FerretDB 1.24.2 (copied into internal/handler/sjson/ at build time).
//
// Every stored document carries its schema (each field's type, arrays item by item), and upstream parsed it on every
// read: on the relay's threads it is 45% of the stored text (7 KB of 15), and parsing it was a seventh of an `_id`
// find's CPU, more with the garbage it left. Documents of one shape have the same schema text, byte for byte (a
// thread read again, a thread's messages, threads in the same state), so the fast decoder (sjson_decode.go) keeps
// what it parsed by that text: its top-level split at once, each property's schema the first time a read needs it.
// Parsed schemas are never changed after they are made, so readers share them. Bounded by the text it holds, in two
// generations: a schema used in the last two is kept, the rest go with the older one.

package sjson

import (
	"sync"
)

// schemaCacheBytes: the schema text one generation holds (a thread's is about 7 KB, a message's 0.4 KB: some 18
// threads' shapes, or 300 messages'). What is parsed from a schema takes about five times its text, so both
// generations hold under 2 MiB. Reading 1,500 documents of 1,500 shapes (16 MB of schema text in all) three times,
// FerretDB's RSS was 62-70 MiB, against 58-63 without the cache and 82-90 with 512 KiB generations.
const schemaCacheBytes = 128 << 10

// cachedSchema is a document's top-level schema, split, with each property's schema parsed on first use.
type cachedSchema struct {
	keys  []string       // "$k": the document's keys, in order
	index map[string]int // property name → position in raws and elems
	raws  [][]byte       // each property's schema text (within the cache's own copy)

	mu     sync.Mutex
	elems  []*elem // parsed; valid where parsed is true (a property's schema may be null: nil)
	parsed []bool
}

// elem is the parsed schema of property key (nil when the schema has none, as upstream reads it).
func (c *cachedSchema) elem(key string) (*elem, error) {
	i, ok := c.index[key]
	if !ok {
		return nil, nil
	}

	c.mu.Lock()
	defer c.mu.Unlock()

	if !c.parsed[i] {
		e, err := parseElem(c.raws[i])
		if err != nil {
			return nil, err
		}

		c.elems[i], c.parsed[i] = e, true
	}

	return c.elems[i], nil
}

type schemaCache struct {
	mu       sync.Mutex
	current  map[string]*cachedSchema
	previous map[string]*cachedSchema
	bytes    int
}

var schemas = &schemaCache{current: map[string]*cachedSchema{}}

// get returns the split schema of raw, from the cache when a document of the same shape was read before.
func (c *schemaCache) get(raw []byte) (*cachedSchema, error) {
	c.mu.Lock()
	if s, ok := c.current[string(raw)]; ok {
		c.mu.Unlock()
		return s, nil
	}

	if s, ok := c.previous[string(raw)]; ok {
		c.add(string(raw), s)
		c.mu.Unlock()

		return s, nil
	}
	c.mu.Unlock()

	// The cache's own copy: raw is the row's buffer, which the driver may reuse.
	text := string(raw)

	keys, names, props, err := splitSchema([]byte(text))
	if err != nil {
		return nil, err
	}

	// The decoder adds the document's fields without a search for their key (types_document_decoded.go).
	if !distinct(keys) || !distinct(names) {
		return nil, errFast
	}

	s := &cachedSchema{
		keys:   keys,
		index:  make(map[string]int, len(names)),
		raws:   props,
		elems:  make([]*elem, len(names)),
		parsed: make([]bool, len(names)),
	}

	for i, name := range names {
		s.index[name] = i
	}

	c.mu.Lock()
	c.add(text, s)
	c.mu.Unlock()

	return s, nil
}

// add puts s in the current generation (c.mu held); a full generation becomes the previous one.
func (c *schemaCache) add(text string, s *cachedSchema) {
	if c.bytes+len(text) > schemaCacheBytes {
		c.previous, c.current, c.bytes = c.current, map[string]*cachedSchema{}, 0
	}

	c.current[text] = s
	c.bytes += len(text)
}
