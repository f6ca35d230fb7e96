package tables

import (
	"context"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
)

// warmTablesPerNamespace bounds the tables of one namespace loaded ahead:
// a larger namespace is likely shared with tables this run never writes,
// whose states would only take memory.
const warmTablesPerNamespace = 1000

// warming loads, in the background, the other tables of a namespace once
// the first of them is checked (CheckSource). A run meets each table's
// first record in its one decoding goroutine, and checking a table loads
// it from the catalog (a query, the metadata file read and parsed): done
// one table at a time there, 500 tables kept the decoder waiting for
// about a second before it wrote anything. The tables of a source schema
// (a namespace) tend to arrive together, so the others are loaded, a few
// at a time, while the first is checked and its records decoded.
type warming struct {
	mu      sync.Mutex
	spaces  map[string]bool       // namespaces whose warming started
	pending map[string]*warmEntry // by identKey, until loaded
	closed  bool                  // no warming starts after close
	wg      sync.WaitGroup
	ctx     context.Context
	stop    context.CancelFunc
}

// warmEntry is one table to load ahead. A caller that needs it before a
// worker took it claims it and loads it itself; one that needs it while
// a worker loads it waits for done.
type warmEntry struct {
	started bool
	claimed bool
	done    chan struct{}
}

func (w *warming) init() {
	w.ctx, w.stop = context.WithCancel(context.Background())
	w.spaces = map[string]bool{}
	w.pending = map[string]*warmEntry{}
}

// close stops the loads and waits for them; the catalog may then close.
func (w *warming) close() {
	if w.stop == nil {
		return
	}
	// Under the lock, so that no warmNamespace adds to wg once Wait runs.
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.stop()
	w.wg.Wait()
}

// await returns once the table ident is not being loaded ahead: loaded
// (the caller finds it among the loaded tables), claimed by the caller,
// or failed (the caller loads it and sees why).
func (w *warming) await(ctx context.Context, ident table.Identifier) {
	w.mu.Lock()
	e := w.pending[identKey(ident)]
	if e == nil || e.claimed {
		w.mu.Unlock()
		return
	}
	if !e.started {
		e.claimed = true
		delete(w.pending, identKey(ident))
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
	}
}

// warmNamespace starts loading the tables of ident's namespace, once per
// namespace, other than ident (its caller loads it).
func (p *Publisher) warmNamespace(ident table.Identifier) {
	w := &p.warm
	if w.ctx == nil || len(ident) < 2 {
		return
	}
	ns := ident[:len(ident)-1]
	w.mu.Lock()
	if w.closed || w.spaces[identKey(ns)] {
		w.mu.Unlock()
		return
	}
	w.spaces[identKey(ns)] = true
	w.wg.Add(1)
	w.mu.Unlock()
	go func() {
		defer w.wg.Done()
		var idents []table.Identifier
		for other, err := range p.cat.ListTables(w.ctx, ns) {
			if err != nil {
				// Only a head start is lost: each table loads when checked.
				p.log.Debug("iceberg tables not loaded ahead: listing the namespace failed", "namespace", strings.Join(ns, "."), "error", err)
				return
			}
			if identKey(other) != identKey(ident) && p.loaded.get(other) == nil {
				idents = append(idents, other)
			}
			if len(idents) == warmTablesPerNamespace {
				break
			}
		}
		entries := make([]*warmEntry, len(idents))
		w.mu.Lock()
		for i, other := range idents {
			if w.pending[identKey(other)] == nil {
				entries[i] = &warmEntry{done: make(chan struct{})}
				w.pending[identKey(other)] = entries[i]
			}
		}
		w.mu.Unlock()
		var g errgroup.Group
		g.SetLimit(p.cfg.PublishConcurrency)
		for i, e := range entries {
			if e == nil {
				continue
			}
			g.Go(func() error {
				p.warmTable(idents[i], e)
				return nil
			})
		}
		g.Wait()
	}()
}

// warmTable loads one table ahead, unless a caller claimed it first.
func (p *Publisher) warmTable(ident table.Identifier, e *warmEntry) {
	w := &p.warm
	w.mu.Lock()
	if e.claimed {
		w.mu.Unlock()
		return
	}
	e.started = true
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.pending, identKey(ident))
		w.mu.Unlock()
		close(e.done)
	}()
	if p.loaded.get(ident) != nil || w.ctx.Err() != nil {
		return
	}
	if _, err := p.load(w.ctx, ident); err != nil {
		p.log.Debug("iceberg table not loaded ahead", "table", strings.Join(ident, "."), "error", err)
	}
}
