package parquetenc

import "testing"

// TestLIFOHandsBackTheLastKept: the encoder (or scratch) handed out is the
// one used last, whose memory is the likeliest still in the cache, and no
// more than max are kept.
func TestLIFOHandsBackTheLastKept(t *testing.T) {
	l := newLIFO[int](2)
	if _, ok := l.get(); ok {
		t.Fatal("an empty pool handed something out")
	}
	if !l.put(1) || !l.put(2) {
		t.Fatal("the first two were not kept")
	}
	if l.put(3) {
		t.Error("a third was kept past max 2")
	}
	if v, _ := l.get(); v != 2 {
		t.Errorf("got %d, want 2, the last kept", v)
	}
	l.put(4)
	if v, _ := l.get(); v != 4 {
		t.Errorf("got %d, want 4", v)
	}
	if v, _ := l.get(); v != 1 {
		t.Errorf("got %d, want 1", v)
	}
	if n := l.len(); n != 0 {
		t.Errorf("%d left, want 0", n)
	}
}
