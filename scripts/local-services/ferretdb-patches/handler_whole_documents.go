// handoff-relay patch for FerretDB 1.24.2 (copied into internal/handler/common/ at build time).
//
// A find without a projection returns whole documents. Upstream still ran them through ProjectDocument, which
// copies each document twice to exclude nothing. This iterator hands them on as the backend decoded them (a fresh
// document per read, shared with nothing), and projects only a document whose `_id` is not its first field, so the
// answer keeps `_id` first as before.

package common

import (
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// wholeDocumentsIterator is ProjectionIterator's for an empty projection.
type wholeDocumentsIterator struct {
	iter   types.DocumentsIterator
	filter *types.Document
}

// Next implements iterator.Interface.
func (iter *wholeDocumentsIterator) Next() (struct{}, *types.Document, error) {
	var unused struct{}

	_, doc, err := iter.iter.Next()
	if err != nil {
		return unused, nil, lazyerrors.Error(err)
	}

	if doc.Command() == "_id" {
		return unused, doc, nil
	}

	projected, err := ProjectDocument(doc, types.MakeDocument(0), iter.filter, false)
	if err != nil {
		return unused, nil, lazyerrors.Error(err)
	}

	return unused, projected, nil
}

// Close implements iterator.Interface.
func (iter *wholeDocumentsIterator) Close() {
	iter.iter.Close()
}

// check interfaces
var (
	_ types.DocumentsIterator = (*wholeDocumentsIterator)(nil)
)
