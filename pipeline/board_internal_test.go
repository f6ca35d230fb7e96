package pipeline

import (
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
)

// The decoding goroutines see a noted version only once it is posted, and
// each catalog's tables apart: one catalog for all partitions ("") and a
// partition's own never answer for each other.
func TestVersionBoardPostsPerCatalog(t *testing.T) {
	b := newVersionBoard()
	v1, v2, v3 := &arrowschema.Version{Number: 1}, &arrowschema.Version{Number: 2}, &arrowschema.Version{Number: 3}
	b.note("", "APP.T", v1)
	b.note("p1", "APP.T", v2)
	if got := b.lookup("", "APP.T"); got != nil {
		t.Fatalf("before post: version %v shown", got.Number)
	}
	b.post()
	for _, c := range []struct {
		catalog, table string
		want           *arrowschema.Version
	}{{"", "APP.T", v1}, {"p1", "APP.T", v2}, {"p2", "APP.T", nil}, {"", "APP.U", nil}} {
		if got := b.lookup(c.catalog, c.table); got != c.want {
			t.Errorf("catalog %q table %s: %v, want %v", c.catalog, c.table, got, c.want)
		}
	}
	b.note("", "APP.T", v3)
	b.post()
	if got := b.lookup("", "APP.T"); got != v3 {
		t.Errorf("after a second post: %v, want version 3", got)
	}
	if got := b.lookup("p1", "APP.T"); got != v2 {
		t.Errorf("a post of another catalog's table replaced p1's: %v", got)
	}
}
