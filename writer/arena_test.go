package writer

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// An arena's memory reads as Go's allocator's does: zeroed when handed
// out, even where an earlier file wrote, and kept across a Reallocate,
// whether the allocation grows in place or moves. A file that asks for
// more than the slab holds gets the rest from the parent, which gets it
// back on Free, and grows the slab for the next file, up to max; release
// gives everything back.
func TestFileArenaMemory(t *testing.T) {
	parent := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer parent.AssertSize(t, 0)
	a := newFileArena(parent, 1<<16)

	// No slab yet: the first file's memory is the parent's.
	b := a.Allocate(1000)
	if _, ok := a.offset(b); ok || parent.CurrentAlloc() != 1000 {
		t.Fatalf("first file: in slab %v, parent holds %d", ok, parent.CurrentAlloc())
	}
	a.Free(b)
	a.reset()
	if len(a.slab) != 1250 || parent.CurrentAlloc() != 1250 {
		t.Fatalf("slab of %d bytes after a file that asked for 1000 (parent holds %d), want 1250", len(a.slab), parent.CurrentAlloc())
	}

	dirty := func(b []byte) {
		for i := range b {
			b[i] = 0xAB
		}
	}
	zeroed := func(what string, b []byte) {
		t.Helper()
		if !bytes.Equal(b, make([]byte, len(b))) {
			t.Errorf("%s: not zeroed", what)
		}
	}
	x := a.Allocate(100)
	y := a.Allocate(100)
	if _, ok := a.offset(y); !ok {
		t.Fatal("second allocation not in the slab")
	}
	if off, _ := a.offset(y); off%arenaAlign != 0 {
		t.Errorf("allocation at offset %d, not aligned to %d", off, arenaAlign)
	}
	dirty(x)
	dirty(y)
	// y is the last allocation: it grows in place.
	y2 := a.Reallocate(300, y)
	if &y2[0] != &y[0] {
		t.Error("the last allocation moved to grow")
	}
	if !bytes.Equal(y2[:100], bytes.Repeat([]byte{0xAB}, 100)) {
		t.Error("growing in place lost the bytes")
	}
	zeroed("growing in place, the new bytes", y2[100:])
	// x is not: it moves, with its bytes.
	x2 := a.Reallocate(200, x)
	if &x2[0] == &x[0] {
		t.Error("an allocation grew over the next one")
	}
	if !bytes.Equal(x2[:100], bytes.Repeat([]byte{0xAB}, 100)) {
		t.Error("moving lost the bytes")
	}
	zeroed("moving, the new bytes", x2[100:])
	if cap(x2) != len(x2) {
		t.Error("an allocation's capacity reaches into the next")
	}
	// Past the slab: the parent's, given back on Free.
	held := parent.CurrentAlloc()
	big := a.Allocate(5000)
	if _, ok := a.offset(big); ok || parent.CurrentAlloc() != held+5000 {
		t.Fatalf("an allocation past the slab: in slab %v, parent holds %d more", ok, parent.CurrentAlloc()-held)
	}
	a.Free(big)
	a.Free(x2) // the slab's: back at reset, not to the parent
	if parent.CurrentAlloc() != held {
		t.Errorf("parent holds %d after Free, want %d", parent.CurrentAlloc(), held)
	}
	asked := a.asked
	a.reset()
	if want := asked + asked/4; len(a.slab) != want {
		t.Errorf("slab of %d bytes after a file that asked for %d, want %d", len(a.slab), asked, want)
	}

	// The next file's memory is zeroed where the last one wrote.
	dirty(a.slab)
	zeroed("after reset", a.Allocate(len(a.slab)))
	a.reset()

	// Growth stops at max.
	a.Free(a.Allocate(1 << 20))
	a.reset()
	if len(a.slab) != 1<<16 {
		t.Errorf("slab of %d bytes after a file that asked for 1 MiB, want the max %d", len(a.slab), 1<<16)
	}
	a.release()
}

// Arenas put back after the writer closed are released, not kept.
func TestArenaPoolReleasesAfterClose(t *testing.T) {
	parent := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer parent.AssertSize(t, 0)
	var p arenaPool
	kept, late := p.get(parent, 1<<16), p.get(parent, 1<<16)
	for _, a := range []*fileArena{kept, late} {
		a.Free(a.Allocate(4096))
	}
	p.put(kept)
	if got := p.get(parent, 1<<16); got != kept {
		t.Fatal("the pool did not hand back the arena put in it")
	}
	p.put(kept)
	p.close()
	p.put(late) // a file that finished encoding after Close
	if len(p.free) != 0 {
		t.Errorf("%d arenas kept after close", len(p.free))
	}
}
