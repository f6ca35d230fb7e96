package main

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestStallWatchTellsAStoppedLoop: the probe fails only when a drain is
// running and its loop, having turned once, has not turned for stallAfter.
func TestStallWatchTellsAStoppedLoop(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	turns := new(atomic.Int64)
	w := &stallWatch{turns: turns, now: func() time.Time { return now }}

	now = now.Add(time.Hour)
	if err := w.check(); err != nil {
		t.Fatalf("before any drain: %v", err)
	}
	w.draining(true)
	turns.Add(5)
	now = now.Add(stallAfter + time.Second)
	if err := w.check(); err != nil {
		t.Fatalf("the loop turned since the last check: %v", err)
	}
	now = now.Add(stallAfter / 2)
	if err := w.check(); err != nil {
		t.Fatalf("still for less than %s: %v", stallAfter, err)
	}
	now = now.Add(stallAfter/2 + time.Second)
	err := w.check()
	if err == nil || !strings.Contains(err.Error(), "pipeline stalled: no progress for 2m1s") {
		t.Fatalf("still for %s: %v, want a stall", stallAfter+time.Second, err)
	}
	turns.Add(1)
	if err := w.check(); err != nil {
		t.Fatalf("after a turn: %v", err)
	}
	w.draining(false)
	now = now.Add(time.Hour)
	if err := w.check(); err != nil {
		t.Fatalf("between drains: %v", err)
	}
	w.draining(true)
	now = now.Add(stallAfter + time.Second)
	if err := w.check(); err != nil {
		t.Fatalf("a new drain whose loop has not turned yet (starting): %v", err)
	}
	turns.Add(1)
	w.check()
	now = now.Add(stallAfter + time.Second)
	if err := w.check(); err == nil {
		t.Fatal("a drain whose loop turned once, then not for longer than stallAfter: no stall reported")
	}
}
