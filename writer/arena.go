package writer

import (
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A file of packed rows is unpacked into columns on the goroutine that
// encodes it, and the columns are garbage once it is encoded. With
// hundreds of tables those columns were most of the bytes the process
// allocated (500 tables under 256 MiB: 1.5 of 2.4 GB, in 1,600 files of
// about a megabyte), and each 60 MB allocated started another collection,
// which marked every table's schemas and converters again (44 cycles, a
// second of CPU). A fileArena hands out one slab of memory to the columns
// of one file at a time, bump by bump, and takes it back whole once the
// file is encoded: the next file's columns reuse it.
//
// The slab is taken from the writer's allocator, so the memory budget
// counts it; it grows to what a file asked for (and a quarter more), up
// to max, and a file that asks for more gets the rest from the allocator.
type fileArena struct {
	parent memory.Allocator
	max    int

	mu    sync.Mutex
	slab  []byte
	off   int // the slab's first free byte
	last  int // where the last allocation in the slab starts; -1 for none
	asked int // bytes asked for since the last reset, in the slab or not
}

// arenaAlign is the alignment arrow-go's Go allocator gives.
const arenaAlign = 64

func newFileArena(parent memory.Allocator, max int) *fileArena {
	return &fileArena{parent: parent, max: max, last: -1}
}

// Allocate returns size zeroed bytes, as Go's allocator does.
func (a *fileArena) Allocate(size int) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.allocate(size)
}

func (a *fileArena) allocate(size int) []byte {
	a.asked += size
	start := (a.off + arenaAlign - 1) &^ (arenaAlign - 1)
	if start+size > len(a.slab) {
		return a.parent.Allocate(size)
	}
	b := a.slab[start : start+size : start+size]
	clear(b)
	a.off, a.last = start+size, start
	return b
}

// Reallocate returns b resized to size, its bytes kept and the rest
// zeroed; the slab's last allocation grows in place.
func (a *fileArena) Reallocate(size int, b []byte) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	start, ok := a.offset(b)
	if !ok {
		a.asked += max(0, size-len(b))
		return a.parent.Reallocate(size, b)
	}
	if size <= len(b) {
		return b[:size:size]
	}
	if start == a.last && start+size <= len(a.slab) {
		a.asked += size - len(b)
		clear(a.slab[start+len(b) : start+size])
		a.off = start + size
		return a.slab[start : start+size : start+size]
	}
	nb := a.allocate(size)
	copy(nb, b)
	return nb
}

// Free gives back what the parent allocated; the slab's bytes come back
// at reset.
func (a *fileArena) Free(b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.offset(b); !ok {
		a.parent.Free(b)
	}
}

// offset reports where b starts in the slab, if it is the slab's.
func (a *fileArena) offset(b []byte) (int, bool) {
	if len(a.slab) == 0 || cap(b) == 0 {
		return 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b[:1])))
	s := uintptr(unsafe.Pointer(unsafe.SliceData(a.slab)))
	if p < s || p >= s+uintptr(len(a.slab)) {
		return 0, false
	}
	return int(p - s), true
}

// reset takes the slab back: nothing allocated from it may be used
// after. A file that asked for more than the slab holds grows it for the
// next one.
func (a *fileArena) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.asked > len(a.slab) && len(a.slab) < a.max {
		if a.slab != nil {
			a.parent.Free(a.slab)
		}
		a.slab = a.parent.Allocate(min(a.max, a.asked+a.asked/4))
	}
	a.off, a.last, a.asked = 0, -1, 0
}

// release gives the slab back to the parent.
func (a *fileArena) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.slab != nil {
		a.parent.Free(a.slab)
		a.slab = nil
	}
	a.off, a.last, a.asked = 0, -1, 0
}

// arenaPool keeps the arenas of the files not being encoded: one per
// file encoded at once.
type arenaPool struct {
	mu     sync.Mutex
	free   []*fileArena
	closed bool
}

// get returns a kept arena, or a new one of slabs up to max bytes.
func (p *arenaPool) get(parent memory.Allocator, max int) *fileArena {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		a := p.free[n-1]
		p.free = p.free[:n-1]
		return a
	}
	return newFileArena(parent, max)
}

// put resets a and keeps it, or releases it once the pool is closed.
func (p *arenaPool) put(a *fileArena) {
	a.reset()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		a.release()
		return
	}
	p.free = append(p.free, a)
}

// close releases the kept arenas, and those put back later.
func (p *arenaPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.free {
		a.release()
	}
	p.free, p.closed = nil, true
}
