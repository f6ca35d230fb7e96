package pipeline

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
)

// prepareAheadConcurrency bounds the table preparations in flight at
// once. Creating a table in the SQL catalog is a serializable transaction,
// and concurrent ones conflict on PostgreSQL and are retried after a
// backoff: a first run creating 500 tables took 3.4 s with one creation
// at a time, 2.4 s with two and 7.0 s with eight.
const prepareAheadConcurrency = 2

// aheadPreparations are the table versions being prepared in the
// background, before their first file (icebergTables.prepareAhead).
//
// A version's table is created, or its schema evolved, when its first
// file is flushed, on the goroutine that reads the source: the file
// needs the table's field IDs. On a first run over 500 tables that was
// 500 table creations one after the other, each a catalog transaction
// and a metadata file, while the reading waited. The first row of a
// version comes long before its first file (a file holds thousands of
// rows, or waits for the memory budget), so the preparation starts
// there, beside the reading, and the flush takes its result.
type aheadPreparations struct {
	mu      sync.Mutex
	pending map[*arrowschema.Version]*aheadPreparation
	tables  map[string]*sync.Mutex // one preparation of a table at a time
	closed  bool
	wg      sync.WaitGroup
	slots   chan struct{}
}

// aheadPreparation is one version's preparation; sc and err are set
// before done is closed.
type aheadPreparation struct {
	done chan struct{}
	sc   *arrow.Schema
	err  error
}

func newAheadPreparations() aheadPreparations {
	return aheadPreparations{pending: map[*arrowschema.Version]*aheadPreparation{}, tables: map[string]*sync.Mutex{},
		slots: make(chan struct{}, prepareAheadConcurrency)}
}

// prepareAhead is writer.Config.FileSchemaAhead: it starts preparing v's
// table in the background, unless this run prepared v already. It is
// keyed by the writer's version, not its number: a provisional version
// completed differently by a refresh is another version with the same
// number.
func (t *icebergTables) prepareAhead(v *arrowschema.Version) {
	t.mu.Lock()
	prepared := t.seen[versionKey{v.Table, v.Number}]
	t.mu.Unlock()
	a := &t.ahead
	a.mu.Lock()
	if prepared || a.closed || a.pending[v] != nil {
		a.mu.Unlock()
		return
	}
	p := &aheadPreparation{done: make(chan struct{})}
	a.pending[v] = p
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		defer close(p.done)
		a.slots <- struct{}{}
		defer func() { <-a.slots }()
		p.sc, p.err = t.fileSchemaInOrder(v)
	}()
}

// take waits for v's preparation started ahead, if there is one, and
// returns its result (ok is false when there was none).
func (a *aheadPreparations) take(v *arrowschema.Version) (sc *arrow.Schema, err error, ok bool) {
	a.mu.Lock()
	p := a.pending[v]
	delete(a.pending, v)
	a.mu.Unlock()
	if p == nil {
		return nil, nil, false
	}
	<-p.done
	return p.sc, p.err, true
}

// lockTable holds table's preparation lock until the returned func is
// called.
func (a *aheadPreparations) lockTable(table string) (unlock func()) {
	a.mu.Lock()
	l := a.tables[table]
	if l == nil {
		l = &sync.Mutex{}
		a.tables[table] = l
	}
	a.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// close waits for the preparations in flight and starts no more: the
// catalog may then close.
func (a *aheadPreparations) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.wg.Wait()
}
