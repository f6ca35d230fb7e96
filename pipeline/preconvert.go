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
	posted  atomic.Pointer[boardMaps]
	pending boardMaps // the loop's, posted by post
}

// boardMaps holds the versions by table: in tables when one catalog
// serves every partition, else in byCatalog under the partition's
// catalog. Looked up for every record, with hundreds of tables a key of
// two strings cost twice a table name's lookup (1.5% of the 500-table
// benchmark's CPU).
type boardMaps struct {
	tables    map[string]*arrowschema.Version
	byCatalog map[boardKey]*arrowschema.Version
}

// boardKey is a table of a partition's catalog.
type boardKey struct{ catalog, table string }

func newBoardMaps() boardMaps {
	return boardMaps{tables: map[string]*arrowschema.Version{}, byCatalog: map[boardKey]*arrowschema.Version{}}
}

func (m *boardMaps) get(catalog, table string) *arrowschema.Version {
	if catalog == "" {
		return m.tables[table]
	}
	return m.byCatalog[boardKey{catalog, table}]
}

func newVersionBoard() *versionBoard {
	b := &versionBoard{pending: newBoardMaps()}
	posted := newBoardMaps()
	b.posted.Store(&posted)
	return b
}

// lookup returns the version last posted for table, or nil; any goroutine.
func (b *versionBoard) lookup(catalog, table string) *arrowschema.Version {
	return b.posted.Load().get(catalog, table)
}

// note queues v as table's version in force, unless it is posted
// already; the loop's goroutine.
func (b *versionBoard) note(catalog, table string, v *arrowschema.Version) {
	if b.posted.Load().get(catalog, table) == v {
		return
	}
	// A copy: the record's strings may share memory the source reuses,
	// and storing replaces an equal key's strings with these.
	if catalog == "" {
		b.pending.tables[strings.Clone(table)] = v
	} else {
		b.pending.byCatalog[boardKey{strings.Clone(catalog), strings.Clone(table)}] = v
	}
}

// post shows the noted versions to the decoding goroutines; the loop's.
func (b *versionBoard) post() {
	if len(b.pending.tables) == 0 && len(b.pending.byCatalog) == 0 {
		return
	}
	old := b.posted.Load()
	m := boardMaps{tables: maps.Clone(old.tables), byCatalog: maps.Clone(old.byCatalog)}
	maps.Copy(m.tables, b.pending.tables)
	maps.Copy(m.byCatalog, b.pending.byCatalog)
	clear(b.pending.tables)
	clear(b.pending.byCatalog)
	b.posted.Store(&m)
}
