package parquetenc

import "sync"

// lifo keeps up to max items for reuse and hands back the one kept last.
// Channels hand them back first in, first out: with a dozen kept, every
// page was compressed by the encoder used a dozen pages before, whose
// 256 KiB of match tables had left the cache (zstd ran at half the speed
// of back-to-back compression on the 500-table stream's small pages).
type lifo[T any] struct {
	mu    sync.Mutex
	items []T
	max   int
}

func newLIFO[T any](max int) *lifo[T] { return &lifo[T]{max: max} }

// get returns the item kept last, or false when none is kept.
func (l *lifo[T]) get() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var zero T
	n := len(l.items)
	if n == 0 {
		return zero, false
	}
	it := l.items[n-1]
	l.items[n-1] = zero
	l.items = l.items[:n-1]
	return it, true
}

// put keeps it, unless max are kept already; it reports whether it did.
func (l *lifo[T]) put(it T) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) >= l.max {
		return false
	}
	l.items = append(l.items, it)
	return true
}

// len is the number of items kept.
func (l *lifo[T]) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}
