// handoff-relay patch for modernc.org/sqlite v1.32.0 (copied into its lib/ package at build time, where SQLite's own
// walWriteOneFrame is renamed: scripts/local-services/ferretdb-build.ts).
//
// SQLite writes each page of a commit to the WAL as two writes, the frame's 24-byte header and then the page. A write
// is a system call, and system calls were a quarter of FerretDB's CPU on these machines; a thread's update commits
// about ten pages. The frame is now assembled in one buffer and written once: the same bytes at the same offsets, so
// the WAL, its checksums and what a crash leaves behind are what SQLite's two writes make.

//go:build linux && (amd64 || arm64)

package sqlite3

import (
	"unsafe"

	"modernc.org/libc"
)

func _walWriteOneFrame(tls *libc.TLS, p uintptr, pPage uintptr, nTruncate int32, iOffset Tsqlite3_int64) (r int32) {
	szPage := int((*TWalWriter)(unsafe.Pointer(p)).FszPage)
	n := WAL_FRAME_HDRSIZE + szPage
	frame := tls.Alloc(n)
	defer tls.Free(n)
	pData := (*TPgHdr)(unsafe.Pointer(pPage)).FpData
	_walEncodeFrame(tls, (*TWalWriter)(unsafe.Pointer(p)).FpWal, (*TPgHdr)(unsafe.Pointer(pPage)).Fpgno, uint32(nTruncate), pData, frame)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(frame+WAL_FRAME_HDRSIZE)), szPage), unsafe.Slice((*byte)(unsafe.Pointer(pData)), szPage))
	return _walWriteToLog(tls, p, frame, int32(n), iOffset)
}
