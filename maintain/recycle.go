package maintain

import (
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// recyclingAllocator allocates the buffers of a pass's Parquet page
// readers and hands those that a reader frees to the next one. arrow-go's
// page reader allocates a 16 KiB decompression buffer for every column
// chunk it opens, whatever the chunk's size, and a pass opens about
// fifteen chunks in each of thousands of small files: allocating and
// clearing those buffers was a tenth of a compaction's CPU. Sizes from
// 4 KiB to 4 MiB are kept by powers of two; the rest go to Go's
// allocator. Every buffer comes back cleared, as Go's allocator gives
// them, and 64-byte aligned, as Arrow wants them (Go places objects of
// these sizes at multiples of their size, or of its 8 KiB pages).
//
// Only the page readers use it: they own their buffers from opening to
// Close, and the rows they decode are copied into Arrow arrays of another
// allocator, so a buffer recycled too early could not reach the rows
// that outlive the file's read.
type recyclingAllocator struct {
	classes [maxRecycledShift - minRecycledShift + 1]sync.Pool
}

const (
	minRecycledShift = 12 // 4 KiB
	maxRecycledShift = 22 // 4 MiB
)

func newRecyclingAllocator() *recyclingAllocator { return &recyclingAllocator{} }

// recycledClass returns the index of the smallest class that holds n bytes.
func recycledClass(n int) (int, bool) {
	if n <= 0 || n > 1<<maxRecycledShift {
		return 0, false
	}
	shift := minRecycledShift
	for 1<<shift < n {
		shift++
	}
	return shift - minRecycledShift, true
}

func (a *recyclingAllocator) Allocate(size int) []byte {
	c, ok := recycledClass(size)
	if !ok {
		return memory.DefaultAllocator.Allocate(size)
	}
	if p, _ := a.classes[c].Get().(*[]byte); p != nil {
		b := (*p)[:size]
		clear(b)
		return b
	}
	b := make([]byte, size, 1<<(c+minRecycledShift))
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 != 0 {
		return memory.DefaultAllocator.Allocate(size)
	}
	return b
}

func (a *recyclingAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:]) // what the buffer held before it was recycled
		}
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free keeps b for the next Allocate of its class when its capacity is
// a class's size (every buffer Allocate made for a class is, and is
// aligned); the others are left to the garbage collector.
func (a *recyclingAllocator) Free(b []byte) {
	c, ok := recycledClass(cap(b))
	if !ok || cap(b) != 1<<(c+minRecycledShift) {
		return
	}
	b = b[:cap(b)]
	a.classes[c].Put(&b)
}
