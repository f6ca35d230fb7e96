package maintain

import (
	"sync"
	"testing"
	"unsafe"
)

// TestRecycledBuffersComeBackClear: a buffer handed out again must read
// as a new one (zeroes, 64-byte aligned), also where Reallocate grows it
// into what it held before, and sizes outside the classes still work.
func TestRecycledBuffersComeBackClear(t *testing.T) {
	a := newRecyclingAllocator()
	for _, size := range []int{1, 64, 4095, 4096, 4097, 16384, 100_000, 4 << 20, 4<<20 + 1} {
		b := a.Allocate(size)
		if len(b) != size {
			t.Fatalf("Allocate(%d) gave %d bytes", size, len(b))
		}
		for i := range b {
			b[i] = 0xAB
		}
		a.Free(b)
		// Possibly the same buffer again; with a smaller length, then
		// grown back within its capacity.
		c := a.Allocate(size / 2)
		c = a.Reallocate(size, c)
		if len(c) != size {
			t.Fatalf("Reallocate(%d) gave %d bytes", size, len(c))
		}
		if uintptr(unsafe.Pointer(unsafe.SliceData(c)))%64 != 0 {
			t.Fatalf("a buffer of %d bytes is not 64-byte aligned", size)
		}
		for i, v := range c {
			if v != 0 {
				t.Fatalf("byte %d of a recycled buffer of %d bytes is %#x, not 0", i, size, v)
			}
		}
		a.Free(c)
	}
}

// TestRecyclingKeepsBuffers: freed buffers of a class are handed out
// again for that class (the point of the allocator; sync.Pool drops some,
// so it is enough that some are), and a buffer in use never is.
func TestRecyclingKeepsBuffers(t *testing.T) {
	a := newRecyclingAllocator()
	inUse := map[*byte]bool{}
	for range 10 {
		inUse[unsafe.SliceData(a.Allocate(16<<10))] = true
	}
	freed := map[*byte]bool{}
	for range 100 {
		b := a.Allocate(16 << 10)
		freed[unsafe.SliceData(b)] = true
	}
	for p := range freed {
		if inUse[p] {
			t.Fatal("a buffer in use was handed out again")
		}
	}
	for p := range freed {
		a.Free(unsafe.Slice(p, 16<<10))
	}
	reused, seen := 0, map[*byte]bool{}
	for range 100 {
		p := unsafe.SliceData(a.Allocate(10 << 10))
		if inUse[p] || seen[p] {
			t.Fatal("a buffer in use was handed out again")
		}
		seen[p] = true
		if freed[p] {
			reused++
		}
	}
	if reused == 0 {
		t.Fatal("none of 100 freed 16 KiB buffers was handed out again")
	}
}

// TestRecyclingAllocatorConcurrently: readers of different tables share
// the allocator; each buffer must be one goroutine's at a time (the race
// detector and the written pattern check it).
func TestRecyclingAllocatorConcurrently(t *testing.T) {
	a := newRecyclingAllocator()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				size := 1024 << (i % 8)
				b := a.Allocate(size)
				for j := range b {
					b[j] = byte(g)
				}
				for j := range b {
					if b[j] != byte(g) {
						t.Errorf("goroutine %d: another one wrote into its buffer", g)
						return
					}
				}
				a.Free(b)
			}
		})
	}
	wg.Wait()
}
