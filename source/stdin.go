package source

import (
	"context"
	"io"
)

// stoppableReader reads its source in a goroutine of its own, so that a
// read can give up when the run stops: a read of stdin blocks until the
// writer sends or closes, which behind `tail -f` is never, and a stopped
// run would wait for it instead of checkpointing what it has and exiting.
// What the goroutine has read when the run stops is not handed out; stdin
// cannot be read again anyway, and a named stream fed again resumes after
// its last checkpoint.
type stoppableReader struct {
	src     io.Reader
	ctx     context.Context // of the current Next; set before each read
	chunks  chan stdinChunk
	free    chan []byte // buffers handed out whole, for the goroutine to read into again
	started bool
	pending []byte
	held    []byte // the buffer pending is in
	err     error
}

type stdinChunk struct {
	b   []byte
	err error
}

// stdinChunkBytes is what the goroutine reads at a time.
const stdinChunkBytes = 64 << 10

func newStoppableReader(src io.Reader) *stoppableReader {
	return &stoppableReader{src: src, ctx: context.Background(), chunks: make(chan stdinChunk, 1), free: make(chan []byte, 2)}
}

func (r *stoppableReader) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		r.release()
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	if !r.started {
		r.started = true
		go r.fill()
	}
	select {
	case c := <-r.chunks:
		n := copy(p, c.b)
		r.pending, r.held, r.err = c.b[n:], c.b, c.err
		r.release()
		if n == 0 && c.err != nil {
			return 0, c.err
		}
		return n, nil
	case <-r.ctx.Done():
		return 0, r.ctx.Err()
	}
}

// release gives the held buffer back once all of it is handed out: a
// writer that sends a line at a time would otherwise cost a buffer a line.
func (r *stoppableReader) release() {
	if len(r.pending) > 0 || r.held == nil {
		return
	}
	select {
	case r.free <- r.held[:cap(r.held)]:
	default:
	}
	r.held = nil
}

// fill reads the source until it ends or fails; it stays blocked in a
// read of a source that never ends after the run stopped, until the
// process exits.
func (r *stoppableReader) fill() {
	for {
		var b []byte
		select {
		case b = <-r.free:
		default:
			b = make([]byte, stdinChunkBytes)
		}
		n, err := r.src.Read(b)
		if n == 0 && err == nil {
			continue
		}
		r.chunks <- stdinChunk{b[:n], err}
		if err != nil {
			return
		}
	}
}
