package store

import (
	"context"
	"slices"
	"testing"
)

// TestLocalListWalksThePrefixFolder: a listing returns every key with the
// prefix, a partial last segment included, and nothing (no error) under
// a folder that does not exist.
func TestLocalListWalksThePrefixFolder(t *testing.T) {
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []string{"a/b/1", "a/bc/2", "a/b/c/3", "x/4", "top"} {
		if err := l.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string][]string{
		"a/b/":    {"a/b/1", "a/b/c/3"},
		"a/b":     {"a/b/1", "a/b/c/3", "a/bc/2"},
		"":        {"a/b/1", "a/b/c/3", "a/bc/2", "top", "x/4"},
		"t":       {"top"},
		"none/x/": nil,
		"a/zz/":   nil,
	} {
		got, err := l.List(ctx, prefix)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("List(%q) = %v, %v; want %v", prefix, got, err, want)
		}
	}
}
