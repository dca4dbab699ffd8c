// handoff-relay patch for modernc.org/sqlite v1.32.0, the SQLite driver of FerretDB 1.24.2 (copied into the driver's
// package at build time; scripts/local-services/ferretdb-build.ts).
//
// The driver prepares every statement on every Exec and Query and finalizes it after: FerretDB runs a few SQL texts
// over and over, and preparing them again was 5–9% of its CPU. Each connection now keeps what it prepared from a text
// that is one whole statement: run, it is reset (its bindings cleared) and kept, idle, for the next run of the same
// text on that connection. A statement still running when its text comes again (rows left open) leaves the new run a
// fresh one. database/sql uses a connection from one goroutine at a time, so the cache needs no lock.

package sqlite

import (
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// stmtCacheSize is how many idle statements a connection keeps; past it, an idle one is finalized to make room.
const stmtCacheSize = 128

type stmtCache struct {
	// idle: reset statements by their text, ready to run.
	idle map[string]uintptr
	// texts: the text of every statement the cache may keep (idle or running), by handle.
	texts map[uintptr]string
}

// prepareCached is prepareV2, but a text that is one whole statement comes back as the connection's idle statement of
// that text when it has one (zSQL then points past the text, as after prepareV2).
func (c *conn) prepareCached(zSQL *uintptr) (uintptr, error) {
	text := libc.GoString(*zSQL)

	if pstmt, ok := c.cache.idle[text]; ok {
		delete(c.cache.idle, text)
		*zSQL += uintptr(len(text))

		return pstmt, nil
	}

	pstmt, err := c.prepareV2(zSQL)
	if err != nil || pstmt == 0 {
		return pstmt, err
	}

	// Only a text that is one statement, nothing after it: the next run of it is that statement again.
	if *(*byte)(unsafe.Pointer(*zSQL)) == 0 {
		if c.cache.texts == nil {
			c.cache.texts = make(map[uintptr]string)
			c.cache.idle = make(map[string]uintptr)
		}

		c.cache.texts[pstmt] = text
	}

	return pstmt, nil
}

// release ends a run of pstmt: reset and kept idle for its text when the cache may keep it, finalized otherwise.
// Either way it returns what finalize would, the error of the statement's last step.
func (c *conn) release(pstmt uintptr) error {
	text, ok := c.cache.texts[pstmt]
	if !ok {
		return c.finalize(pstmt)
	}

	if _, taken := c.cache.idle[text]; taken || c.db == 0 {
		delete(c.cache.texts, pstmt)
		return c.finalize(pstmt)
	}

	if len(c.cache.idle) >= stmtCacheSize {
		for evicted, idle := range c.cache.idle {
			delete(c.cache.idle, evicted)
			delete(c.cache.texts, idle)
			_ = c.finalize(idle)

			break
		}
	}

	rc := sqlite3.Xsqlite3_reset(c.tls, pstmt)
	sqlite3.Xsqlite3_clear_bindings(c.tls, pstmt)
	c.cache.idle[text] = pstmt

	if rc != sqlite3.SQLITE_OK {
		return c.errstr(rc)
	}

	return nil
}

// finalizeIdle finalizes the idle statements, before the connection closes.
func (c *conn) finalizeIdle() {
	for text, pstmt := range c.cache.idle {
		delete(c.cache.idle, text)
		delete(c.cache.texts, pstmt)
		_ = c.finalize(pstmt)
	}
}
