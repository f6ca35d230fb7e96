package tables

import (
	"context"
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
