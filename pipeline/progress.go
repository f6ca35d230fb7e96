package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

// progressReporter is implemented by sources that know their size.
type progressReporter interface{ Progress() (done, total int64) }

// progress logs the records read, and the bytes for sources that know
// their size, every so often, from a goroutine of its own.
type progress struct {
	every time.Duration // 0: never
	log   *slog.Logger
	count atomic.Int64 // records read so far, stored by the loop
}

// start logs until stop is called.
func (p *progress) start(ctx context.Context, src source.Source) (stop func()) {
	if p.every <= 0 {
		return func() {}
	}
	pr, sized := src.(progressReporter)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(p.every)
		defer t.Stop()
		last, lastAt := int64(0), time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				// Every source reports its records; Kafka, which has no
				// size to measure against, only those.
				n := p.count.Load()
				args := []any{"records_read", n, "records_per_second", int64(float64(n-last) / now.Sub(lastAt).Seconds())}
				last, lastAt = n, now
				if sized {
					d, total := pr.Progress()
					args = append(args, "bytes_read", d)
					if total > 0 {
						args = append(args, "percent", fmt.Sprintf("%.1f", 100*float64(d)/float64(total)))
					}
				}
				p.log.Info("progress", args...)
			}
		}
	}()
	return func() { cancel(); <-done }
}
