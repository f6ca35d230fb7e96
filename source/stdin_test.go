package source

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
)

// TestStdinReadStopsWithTheRun: a run over stdin whose writer neither
// sends nor closes (`tail -f | exporter`) stops when asked: the read in
// progress gives up with the run's context, after the records that came
// before it were handed out. It used to wait for the writer.
func TestStdinReadStopsWithTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		f, err := NewFiles([]string{"-"}, 0, pr)
		if err != nil {
			t.Fatal(err)
		}
		go pw.Write([]byte("{\"a\":1}\n{\"a\":2}\n"))
		ctx, cancel := context.WithCancel(t.Context())
		for i := range 2 {
			m, err := f.Next(ctx)
			if err != nil || string(m.Value) != `{"a":`+string(rune('1'+i))+`}` {
				t.Fatalf("record %d: %v, %v", i+1, m, err)
			}
		}
		done := make(chan error, 1)
		go func() {
			_, err := f.Next(ctx)
			done <- err
		}()
		synctest.Wait() // Next waits for stdin
		select {
		case err := <-done:
			t.Fatalf("Next returned %v with nothing to read", err)
		default:
		}
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Next after the stop: %v, want context.Canceled", err)
			}
		default:
			t.Fatal("Next still waits for stdin after the run stopped")
		}
		pw.Close() // the writer goes away: the reading goroutine ends
		f.Close()
	})
}
