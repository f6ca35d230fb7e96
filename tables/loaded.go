package tables

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"
)

// loadedTables keeps the last state of each table this publisher loaded,
// created or committed. Loading a table reads its whole metadata file,
// which grows by a snapshot every round: without the cache every round
// paid that per table twice (schema check, then commit). A cached state
// may be behind the catalog when another instance committed since; a
// commit from it then fails the catalog's optimistic check, and the
// caller reloads and retries, as it does for any conflict.
type loadedTables struct {
	mu     sync.Mutex
	tables map[string]*table.Table
}

func (l *loadedTables) get(ident table.Identifier) *table.Table {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tables[strings.Join(ident, "\x00")]
}

func (l *loadedTables) put(ident table.Identifier, tbl *table.Table) {
	if tbl == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tables == nil {
		l.tables = make(map[string]*table.Table)
	}
	key := strings.Join(ident, "\x00")
	if old := l.tables[key]; old != nil && old.Metadata().LastUpdatedMillis() > tbl.Metadata().LastUpdatedMillis() {
		return // a load that started before a commit of ours finished after it
	}
	l.tables[key] = tbl
}

func (l *loadedTables) forget(ident table.Identifier) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.tables, strings.Join(ident, "\x00"))
}

// load returns the table as the catalog has it now, and remembers it.
func (p *Publisher) load(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	tbl, err := p.cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	p.loaded.put(ident, tbl)
	return tbl, nil
}

// isConflict reports whether a commit failed because another writer
// committed to the table first, so that committing again on the table as
// the catalog has it now may succeed. The REST catalog says so with
// table.ErrCommitFailed; iceberg-go's SQL and hadoop catalogs check the
// commit's requirements (the branch still at the snapshot the commit
// started from, the schema still the one it was built on) themselves and
// return a plain error that only its text tells apart.
func isConflict(err error) bool {
	return errors.Is(err, table.ErrCommitFailed) || strings.Contains(strings.ToLower(err.Error()), "requirement failed")
}
