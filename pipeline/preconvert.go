package pipeline

import (
	"maps"
	"strings"
	"sync/atomic"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
)

// versionBoard shows the decoding goroutines each table's schema version
// in force, so that they convert row changes ahead (writer.Preconverter)
// while the loop, which owns the catalogs, appends earlier ones. What
// they read may be stale: the loop appends a record converted ahead only
// under the version it was converted with, and converts it itself
// otherwise. The board only saves that work, so the loop posts a version
// when it found one missing or stale, at most once per batch.
type versionBoard struct {
	posted  atomic.Pointer[map[boardKey]*arrowschema.Version]
	pending map[boardKey]*arrowschema.Version // the loop's, posted by post
}

// boardKey is a table of a catalog: "" when one catalog serves every
// partition, else the partition's.
type boardKey struct{ catalog, table string }

func newVersionBoard() *versionBoard {
	b := &versionBoard{pending: map[boardKey]*arrowschema.Version{}}
	b.posted.Store(&map[boardKey]*arrowschema.Version{})
	return b
}

// lookup returns the version last posted for table, or nil; any goroutine.
func (b *versionBoard) lookup(catalog, table string) *arrowschema.Version {
	return (*b.posted.Load())[boardKey{catalog, table}]
}

// note queues v as table's version in force, unless it is posted
// already; the loop's goroutine.
func (b *versionBoard) note(catalog, table string, v *arrowschema.Version) {
	if (*b.posted.Load())[boardKey{catalog, table}] == v {
		return
	}
	// A copy: the record's strings may share memory the source reuses,
	// and storing replaces an equal key's strings with these.
	b.pending[boardKey{strings.Clone(catalog), strings.Clone(table)}] = v
}

// post shows the noted versions to the decoding goroutines; the loop's.
func (b *versionBoard) post() {
	if len(b.pending) == 0 {
		return
	}
	m := maps.Clone(*b.posted.Load())
	maps.Copy(m, b.pending)
	clear(b.pending)
	b.posted.Store(&m)
}
