package tables

import (
	"context"
	"errors"
	"fmt"
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
	held   func(n int) // Config.TablesHeld
}

// counted tells held the number of tables kept; l.mu is held, so that
// the last call has the last number.
func (l *loadedTables) counted() {
	if l.held != nil {
		l.held(len(l.tables))
	}
}

// identKey is a map key for an identifier (its parts may hold dots).
func identKey(ident table.Identifier) string { return strings.Join(ident, "\x00") }

func (l *loadedTables) get(ident table.Identifier) *table.Table {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tables[identKey(ident)]
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
	key := identKey(ident)
	old := l.tables[key]
	if old != nil && newer(old, tbl) {
		return // a load that started before a commit of ours finished after it
	}
	l.tables[key] = tbl
	if old == nil {
		l.counted()
	}
}

// newer reports whether a is a later state of its table than b: by the
// sequence number its snapshots reached, which the catalog's optimistic
// commits make grow with every snapshot whatever the writers' clocks say,
// then, between states of one snapshot (a schema or property change), by
// the time of the last update. States of two different tables (one
// dropped and created again under its name) are not ordered by those:
// the state put last, b, is the one the catalog gave last.
func newer(a, b *table.Table) bool {
	am, bm := a.Metadata(), b.Metadata()
	if am.TableUUID() != bm.TableUUID() {
		return false
	}
	if am.LastSequenceNumber() != bm.LastSequenceNumber() {
		return am.LastSequenceNumber() > bm.LastSequenceNumber()
	}
	return am.LastUpdatedMillis() > bm.LastUpdatedMillis()
}

func (l *loadedTables) forget(ident table.Identifier) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.tables[identKey(ident)]; ok {
		delete(l.tables, identKey(ident))
		l.counted()
	}
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

// raced reports whether a commit built on base failed because another
// writer committed to the table at the same time, so that committing
// again on the table as the catalog has it now (reloaded) may succeed:
// the catalog says so with table.ErrCommitFailed (the REST catalog's
// 409, the hadoop catalog's metadata version claimed by another writer
// whose commit is still on its way), or the table has moved past base
// (its metadata location changed, as on every commit): the SQL and
// hadoop catalogs refuse a stale commit with a plain "requirement
// failed". A refusal that left the table as it was (no permission, a
// broken catalog) is not retried.
func raced(err error, base, reloaded *table.Table) bool {
	if errors.Is(err, table.ErrCommitFailed) {
		return true
	}
	return base != nil && reloaded != nil && reloaded.MetadataLocation() != base.MetadataLocation()
}

// commitFailed is the error of a commit to ident (what it tried) that
// will not be retried: it failed at its attempt-th try with err, and the
// table could not be reloaded (lerr), or had not moved, or the attempts
// ran out while other writers kept committing first.
func commitFailed(what string, ident table.Identifier, attempt, attempts int, err, lerr error, conflict bool) error {
	name := strings.Join(ident, ".")
	switch {
	case lerr != nil:
		return fmt.Errorf("%s to %s failed (attempt %d), and the table could not be loaded again to see why: %w; check that the catalog is reachable", what, name, attempt, errors.Join(err, lerr))
	case conflict:
		return fmt.Errorf("%s to %s: another writer committed to the table first at each of %d attempts (last: %w); look for other processes writing to it", what, name, attempts, err)
	}
	return fmt.Errorf("%s to %s refused (attempt %d) with the table unchanged: %w; check the catalog's permissions for the table and its logs", what, name, attempt, err)
}
