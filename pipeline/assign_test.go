package pipeline_test

import (
	"context"
	"log/slog"
	"sync"
)

// assignments is a log handler that remembers the partitions a Kafka
// source last logged as assigned to it.
type assignments struct {
	mu  sync.Mutex
	cur []string
}

func (a *assignments) Enabled(context.Context, slog.Level) bool { return true }
func (a *assignments) WithAttrs([]slog.Attr) slog.Handler       { return a }
func (a *assignments) WithGroup(string) slog.Handler            { return a }

func (a *assignments) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "kafka partitions assigned" {
		return nil
	}
	r.Attrs(func(at slog.Attr) bool {
		if at.Key == "partitions" {
			if ps, ok := at.Value.Any().([]string); ok {
				a.mu.Lock()
				a.cur = ps
				a.mu.Unlock()
			}
		}
		return true
	})
	return nil
}

func (a *assignments) get() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cur
}

// tee also writes every record to h (for debugging a failing test).
type tee struct {
	*assignments
	h slog.Handler
}

func (t tee) Handle(ctx context.Context, r slog.Record) error {
	t.assignments.Handle(ctx, r)
	return t.h.Handle(ctx, r)
}
