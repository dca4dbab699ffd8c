// handoff-relay patch for FerretDB 1.24.2 (copied into internal/handler/ at build time).
//
// FerretDB runs update, findAndModify and delete as a read, a filter in Go and a write back, in separate steps:
// two racing conditional updates (findOneAndUpdate({ _id, version: 3 })) could both match and both write. Each of
// those commands now holds its collection's lock from the read to the write, so it is one step relative to every
// other such command on the collection. One FerretDB process serves every relay process, and SQLite takes one
// writer at a time anyway, so the lock costs little.

package handler

import "sync"

// collectionWriteLocks holds one *sync.Mutex per "db.collection".
var collectionWriteLocks sync.Map

// lockCollection locks the collection's conditional writes and returns the unlock function.
func lockCollection(db, collection string) func() {
	l, _ := collectionWriteLocks.LoadOrStore(db+"."+collection, new(sync.Mutex))
	mu := l.(*sync.Mutex)
	mu.Lock()

	return mu.Unlock
}
