package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestRemoveStaleTempsTakesOnlyDeadWritersFiles: a temporary file a
// crashed put left (old, unlocked) is removed; one a running put still
// holds (locked, however old), a fresh one and ordinary files stay.
func TestRemoveStaleTempsTakesOnlyDeadWritersFiles(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	write := func(rel string, mtime time.Time) string {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, mtime, mtime)
		return p
	}
	dead := write("T/dt=2026-01-01/.tmp-123", old)
	fresh := write("T/dt=2026-01-01/.tmp-456", time.Now())
	data := write("T/dt=2026-01-01/part-1.parquet", old)
	live, err := l.writeTemp(filepath.Join(dir, "T"), []byte("in flight"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	os.Chtimes(live.Name(), old, old)

	n, err := l.RemoveStaleTemps(context.Background())
	if err != nil || n != 1 {
		t.Errorf("removed %d (%v), want 1", n, err)
	}
	for p, want := range map[string]bool{dead: false, fresh: true, data: true, live.Name(): true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", p, err == nil, want)
		}
	}
}

// TestPutAndPutIfAbsentLeaveOnlyTheObject: both kinds of put go through
// one temporary file that is gone afterwards, also when PutIfAbsent finds
// the key taken.
func TestPutAndPutIfAbsentLeaveOnlyTheObject(t *testing.T) {
	dir := t.TempDir()
	l, _ := NewLocal(dir)
	ctx := context.Background()
	if _, err := l.PutIfAbsent(ctx, "a/b", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PutIfAbsent(ctx, "a/b", []byte("2")); err == nil {
		t.Error("second PutIfAbsent succeeded")
	}
	if err := l.Put(ctx, "a/c", []byte("3")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "a"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"b", "c"}) {
		t.Errorf("folder holds %v", names)
	}
	if got, _ := l.Get(ctx, "a/b"); string(got) != "1" {
		t.Errorf("a/b = %q", got)
	}
}
