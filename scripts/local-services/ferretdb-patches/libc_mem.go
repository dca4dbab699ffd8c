// handoff-relay patch for modernc.org/libc v1.55.3, the C library SQLite runs on in FerretDB 1.24.2 (copied into
// libc's package at build time, where musl's memcpy and memcmp are renamed: scripts/local-services/ferretdb-build.ts).
//
// musl's memcpy, translated to Go, moves 4 bytes at a time, and its memcmp compares one byte at a time. SQLite copies
// a document's JSON text (5 KB for a thread) for each index expression it evaluates on a write and compares it with
// the texts it parsed before; these two were a fifth of FerretDB's CPU in an update. Go's copy and bytes.Compare do
// the same with vector instructions. memcmp's callers in SQLite read only its sign, which bytes.Compare gives.

//go:build linux && (amd64 || arm64)

package libc

import (
	"bytes"
	"unsafe"
)

// void *memcpy(void *dest, const void *src, size_t n);
func Xmemcpy(tls *TLS, dest uintptr, src uintptr, n Tsize_t) (r uintptr) {
	if n != 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(dest)), n), unsafe.Slice((*byte)(unsafe.Pointer(src)), n))
	}
	return dest
}

// int memcmp(const void *s1, const void *s2, size_t n);
func Xmemcmp(tls *TLS, vl uintptr, vr uintptr, n Tsize_t) (r1 int32) {
	if n == 0 {
		return 0
	}
	return int32(bytes.Compare(unsafe.Slice((*byte)(unsafe.Pointer(vl)), n), unsafe.Slice((*byte)(unsafe.Pointer(vr)), n)))
}
