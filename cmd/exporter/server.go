package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/metrics"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
)

// stallAfter is how long a running drain may go without a loop turn
// before /readyz reports it stalled (an upload blocked on the store, say).
const stallAfter = 2 * time.Minute

// stallWatch tells a stalled pipeline by its count of loop turns: one
// that has not changed for stallAfter while a drain runs.
type stallWatch struct {
	turns *atomic.Int64
	now   func() time.Time

	mu      sync.Mutex
	running bool
	started int64     // the count when the drain started
	seen    int64     // the count at the last change seen
	since   time.Time // when it was seen to change
}

func (w *stallWatch) draining(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.turns.Load()
	w.running, w.started, w.seen, w.since = on, n, n, w.now()
}

func (w *stallWatch) check() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	// Before its first turn the loop is starting (joining the group,
	// recovering), which may take longer than stallAfter.
	if n := w.turns.Load(); !w.running || n != w.seen || n == w.started {
		w.seen, w.since = n, now
		return nil
	}
	if idle := now.Sub(w.since); idle > stallAfter {
		return fmt.Errorf("pipeline stalled: no progress for %s", idle.Round(time.Second))
	}
	return nil
}

// retryReporter is a store that can tell about the requests it retries.
type retryReporter interface {
	OnRetry(func(op string))
}

// serveMetrics starts the metrics and health listener and wires the
// pipeline's observer to it.
func (r *runCmd) serveMetrics(ctx context.Context, cfg *pipeline.Config, logger *slog.Logger) (func(), error) {
	m := metrics.New()
	cfg.Observer = m
	cfg.Activity = new(atomic.Int64)
	if rr, ok := cfg.Store.(retryReporter); ok {
		rr.OnRetry(m.StorageRetry)
	}
	r.stall = &stallWatch{turns: cfg.Activity, now: time.Now}
	probes := []metrics.Probe{func(ctx context.Context) error { return r.stall.check() }}
	if c, ok := cfg.Store.(checker); ok {
		probes = append(probes, func(ctx context.Context) error { return c.Check(ctx) })
	}
	ln, err := net.Listen("tcp", r.MetricsAddr)
	if err != nil {
		return nil, err
	}
	handler := m.Handler(probes...)
	if r.Pprof {
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.HandleFunc("/debug/pprof/", httppprof.Index)
		mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
		handler = mux
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			logger.Error("metrics listener failed", "error", err)
		}
	}()
	logger.Info("serving metrics and health", "addr", ln.Addr().String())
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
	}, nil
}
