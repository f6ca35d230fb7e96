package pipeline

import (
	"context"
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
// there, beside the reading, and the flush takes its result. A flush
// that comes before its preparation started does it itself, rather than
// wait for the preparations queued before it.
type aheadPreparations struct {
	mu sync.Mutex
	// pending holds the preparations not yet taken, by the writer's
	// version; byNumber the same, by table and version number, so that
	// the versions each Kafka partition's catalog makes for one source
	// version share one preparation.
	pending  map[*arrowschema.Version]*aheadPreparation
	byNumber map[versionKey]*aheadPreparation
	tables   map[string]*sync.Mutex // one preparation of a table at a time
	closed   bool
	wg       sync.WaitGroup
	slots    chan struct{}
	// ctx ends at close: a run that stops early (a failed round, a
	// fence) neither waits for the preparations it no longer needs nor
	// changes tables after it stopped.
	ctx  context.Context
	stop context.CancelFunc
}

// aheadPreparation is one version's preparation. started and claimed
// are guarded by aheadPreparations.mu; sc and err are set before done
// is closed.
type aheadPreparation struct {
	v       *arrowschema.Version
	started bool // a background goroutine is preparing it
	claimed bool // a flush took it before it started, and prepares it itself
	done    chan struct{}
	sc      *arrow.Schema
	err     error
}

func newAheadPreparations(ctx context.Context) aheadPreparations {
	ctx, stop := context.WithCancel(ctx)
	return aheadPreparations{pending: map[*arrowschema.Version]*aheadPreparation{}, byNumber: map[versionKey]*aheadPreparation{},
		tables: map[string]*sync.Mutex{}, slots: make(chan struct{}, prepareAheadConcurrency), ctx: ctx, stop: stop}
}

// prepareAhead is writer.Config.FileSchemaAhead: it starts preparing v's
// table in the background, unless this run prepared v already. It is
// keyed by the writer's version, not its number: a provisional version
// completed differently by a refresh is another version with the same
// number; versions of one number and schema share a preparation.
func (t *icebergTables) prepareAhead(v *arrowschema.Version) {
	key := versionKey{v.Table, v.Number}
	t.mu.Lock()
	prepared := t.seen[key]
	t.mu.Unlock()
	a := &t.ahead
	a.mu.Lock()
	if prepared || a.closed || a.pending[v] != nil {
		a.mu.Unlock()
		return
	}
	if same := a.byNumber[key]; same != nil && !same.claimed && same.v.Schema.Equal(v.Schema) {
		a.pending[v] = same
		a.mu.Unlock()
		return
	}
	p := &aheadPreparation{v: v, done: make(chan struct{})}
	a.pending[v] = p
	a.byNumber[key] = p
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		defer close(p.done)
		select {
		case a.slots <- struct{}{}:
		case <-a.ctx.Done():
			return
		}
		defer func() { <-a.slots }()
		a.mu.Lock()
		skip := p.claimed || a.closed
		p.started = !skip
		a.mu.Unlock()
		if !skip {
			p.sc, p.err = t.fileSchemaInOrder(a.ctx, v)
		}
	}()
}

// take returns the result of v's preparation started ahead, waiting for
// it if it is under way; ok is false when there is none, or when it had
// not started (the caller prepares v itself).
func (a *aheadPreparations) take(v *arrowschema.Version) (sc *arrow.Schema, err error, ok bool) {
	a.mu.Lock()
	p := a.pending[v]
	delete(a.pending, v)
	if p == nil {
		a.mu.Unlock()
		return nil, nil, false
	}
	if key := (versionKey{v.Table, v.Number}); a.byNumber[key] == p {
		delete(a.byNumber, key)
	}
	if !p.started {
		p.claimed = true
		a.mu.Unlock()
		return nil, nil, false
	}
	a.mu.Unlock()
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

// close stops the preparations not yet taken and waits for those in
// flight, and starts no more: the catalog may then close. A run that
// ends normally has taken every preparation (its last flush).
func (a *aheadPreparations) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.stop()
	a.wg.Wait()
}
