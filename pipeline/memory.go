package pipeline

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// countingAllocator measures the bytes Arrow holds through it: the open
// table buffers (at their real capacity, which doubles as they grow),
// finished files waiting to be encoded, and the Parquet encoder's column
// buffers. The memory budget is kept against this measurement; an
// estimate per row missed the builders' spare capacity and let memory
// reach twice the budget.
//
// (Recycling freed buffers here was tried and measured: most of the
// encoder's garbage comes from arrow-go's own buffer pool, which this
// allocator does not see, and buffers kept for reuse count against the
// budget, so files got smaller and the run slower. The columns of files
// of packed rows are reused instead: the writer unpacks them into an
// arena per encoding, sized to what a file needs; see writer/arena.go.)
type countingAllocator struct {
	memory.Allocator
	inUse atomic.Int64
}

func newCountingAllocator(a memory.Allocator) *countingAllocator {
	if a == nil {
		a = memory.DefaultAllocator
	}
	return &countingAllocator{Allocator: a}
}

func (c *countingAllocator) Allocate(size int) []byte {
	c.inUse.Add(int64(size))
	return c.Allocator.Allocate(size)
}

func (c *countingAllocator) Reallocate(size int, b []byte) []byte {
	c.inUse.Add(int64(size - len(b)))
	return c.Allocator.Reallocate(size, b)
}

func (c *countingAllocator) Free(b []byte) {
	c.inUse.Add(-int64(len(b)))
	c.Allocator.Free(b)
}
