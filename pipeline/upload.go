package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"golang.org/x/sync/semaphore"

	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// uploader encodes finished files to Parquet and puts them into the store
// on a few goroutines while decoding goes on, each after its intent
// (commit.Committer.WriteIntent), and marks it uploaded. The bytes waiting
// for upload are bounded: when the store is slow or down, send blocks, and
// so the pipeline stops reading input instead of growing.
type uploader struct {
	store   Store
	commits *commit.Committer
	log     *slog.Logger
	queue   chan queued
	wg      sync.WaitGroup
	// bytes bounds the (estimated) bytes of files waiting for or in upload.
	bytes    *semaphore.Weighted
	maxBytes int64

	closeOnce sync.Once
	pending   sync.WaitGroup // files sent and not yet uploaded (or failed)

	mu  sync.Mutex
	err error // the first upload failure; everything after it is refused
	sum *Summary
	obs Observer
	// noteFile, when set, is told of every encoded data file before it
	// is marked uploaded (the Iceberg tables keep its footer).
	noteFile func(*writer.File) error

	// inflight is the memory the rows of files sent and not yet done
	// held when they were flushed; encoded is the size of encoded files
	// not yet uploaded.
	// progress is signalled each time a file is done.
	inflight, encoded atomic.Int64
	progress          chan struct{}
	// encoding is the memory of the files being encoded: the Parquet
	// encoder's pages and output grow outside the counting allocator, in
	// byte slices (File.EncodeMemoryBytes). encodeSlots bounds the files
	// encoded at once to the CPUs: more would only add memory, while
	// uploads still run on every worker.
	encoding    atomic.Int64
	encodeSlots chan struct{}
	// upCtx is the uploads' context. It outlives a cancelled run context:
	// a shutdown flushes and uploads what it has before it exits; abort
	// ends it when the shutdown's deadline passes.
	upCtx context.Context
	abort context.CancelFunc
}

func newUploader(ctx context.Context, st Store, commits *commit.Committer, workers int, maxBytes int64, log *slog.Logger, sum *Summary, obs Observer) *uploader {
	u := &uploader{store: st, commits: commits, log: log, queue: make(chan queued, 1024), sum: sum, obs: obs,
		bytes: semaphore.NewWeighted(maxBytes), maxBytes: maxBytes,
		progress: make(chan struct{}, 1), encodeSlots: make(chan struct{}, runtime.GOMAXPROCS(0))}
	u.upCtx, u.abort = context.WithCancel(context.WithoutCancel(ctx))
	for range workers {
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			for q := range u.queue {
				if q.file == nil {
					u.putObject(q)
				} else {
					u.putFile(q)
				}
				u.bytes.Release(q.weight)
				u.pending.Done()
			}
		}()
	}
	return u
}

// putObject writes a plain object (after its intent, if it has one),
// unless an upload has failed.
func (u *uploader) putObject(q queued) {
	if u.failed() != nil {
		return
	}
	if q.intent != nil {
		if err := u.put(u.upCtx, q.key, q.data, q.intent); err != nil {
			u.fail(err)
			return
		}
		u.commits.Uploaded(commit.File{Partition: q.partition, Key: q.key, Bytes: int64(len(q.data)), FirstOffset: q.first, LastOffset: q.last})
		return
	}
	if err := u.store.Put(u.upCtx, q.key, q.data); err != nil {
		u.fail(fmt.Errorf("write %s to %s: %w", q.key, u.store, err))
	}
}

// putFile encodes a file (one per CPU at a time) and uploads it after its
// intent, unless an upload has failed; either way its memory is freed and
// a reader waiting for the budget is woken.
func (u *uploader) putFile(q queued) {
	f := q.file
	defer func() {
		f.Release()
		u.inflight.Add(-q.memory)
		select {
		case u.progress <- struct{}{}:
		default:
		}
	}()
	if u.failed() != nil {
		return
	}
	start := time.Now()
	u.encodeSlots <- struct{}{}
	weight := f.EncodeMemoryBytes()
	u.encoding.Add(weight)
	err := f.Encode()
	u.encoding.Add(-weight)
	<-u.encodeSlots
	if err != nil {
		u.fail(err)
		return
	}
	u.encoded.Add(int64(len(f.Data)))
	defer u.encoded.Add(-int64(len(f.Data)))
	if err := u.put(u.upCtx, f.Key, f.Data, q.intent); err != nil {
		u.fail(err)
		return
	}
	if u.noteFile != nil {
		if err := u.noteFile(f); err != nil {
			u.fail(err)
			return
		}
	}
	u.commits.Uploaded(commit.File{Partition: f.SourcePartition, Table: f.Table, Key: f.Key, Version: f.Version,
		Rows: f.Rows, Bytes: int64(len(f.Data)), FirstOffset: f.FirstOffset, LastOffset: f.LastOffset})
	u.record(f, time.Since(start))
}

// queued is a file and what it holds of the byte bound; or a plain object
// when file is nil: a schema description, or dead letters (which, like
// files, have an intent, and the source range partition, first to last).
type queued struct {
	file   *writer.File
	key    string
	data   []byte
	weight int64
	// memory is what the file's rows held when it was sent.
	memory      int64
	intent      *intentTicket
	partition   string
	first, last int64
}

// intentTicket is the intent of files sent together from one source
// partition: written once, on its own goroutine while they are encoded;
// each file waits for it before its upload.
type intentTicket struct {
	done chan struct{}
	err  error
}

// writeFilesIntent starts writing one intent for files, all of one source
// partition.
func (u *uploader) writeFilesIntent(files []*writer.File) *intentTicket {
	first := files[0].FirstOffset
	keys := make([]string, len(files))
	for i, f := range files {
		keys[i] = f.Key
		first = min(first, f.FirstOffset)
	}
	return u.writeIntent(files[0].SourcePartition, first, keys)
}

// writeIntent starts writing one intent for the objects keys, holding
// records of part from first on.
func (u *uploader) writeIntent(part string, first int64, keys []string) *intentTicket {
	t := &intentTicket{done: make(chan struct{})}
	u.pending.Add(1)
	go func() {
		defer u.pending.Done()
		defer close(t.done)
		t.err = u.commits.WriteIntent(u.upCtx, part, first, keys)
	}()
	return t
}

// put uploads an object once its intent is durable.
func (u *uploader) put(ctx context.Context, key string, data []byte, in *intentTicket) error {
	if in == nil {
		return fmt.Errorf("upload %s: no intent was written for it", key)
	}
	<-in.done
	if in.err != nil {
		return in.err
	}
	if err := u.store.Put(ctx, key, data); err != nil {
		return fmt.Errorf("upload %s to %s: %w", key, u.store, err)
	}
	return nil
}

// wait blocks until every file sent so far is uploaded, and returns the
// first failure; or, if ctx ends first, ends the uploads (abort) and
// returns why: what is not uploaded is then not checkpointed.
func (u *uploader) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		u.pending.Wait()
		close(done)
	}()
	select {
	case <-done:
		return u.failed()
	case <-ctx.Done():
		u.abort()
		<-done // the uploads end with their context
		return errors.Join(fmt.Errorf("uploads stopped unfinished, not checkpointed; the next run writes them again: %w", context.Cause(ctx)), u.failed())
	}
}

func (u *uploader) failed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

func (u *uploader) fail(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err == nil {
		u.err = err
	}
}

func (u *uploader) record(f *writer.File, took time.Duration) {
	u.obs.FileDurable(f.Table, f.Rows, len(f.Data), f.Reason, took, f.NewestOpTS)
	u.mu.Lock()
	u.sum.Files++
	u.sum.Bytes += int64(len(f.Data))
	u.sum.RowsByTable[f.Table] += int64(f.Rows)
	u.mu.Unlock()
	u.log.Info("file written", "table", f.Table, "version", f.Version, "rows", f.Rows, "bytes", len(f.Data),
		"reason", f.Reason, "key", f.Key)
}

// send queues files; it returns the first upload failure, if any. The
// files of each source partition share one intent.
func (u *uploader) send(ctx context.Context, files []*writer.File) error {
	if len(files) == 0 {
		return u.failed()
	}
	tickets := map[string]*intentTicket{}
	if u.failed() == nil {
		byPart := map[string][]*writer.File{}
		for _, f := range files {
			byPart[f.SourcePartition] = append(byPart[f.SourcePartition], f)
		}
		for part, fs := range byPart {
			tickets[part] = u.writeFilesIntent(fs)
		}
	}
	for i, f := range files {
		err := u.failed()
		w := u.weight(f)
		if err == nil {
			err = u.bytes.Acquire(ctx, w)
		}
		if err != nil {
			for _, g := range files[i:] {
				g.Release() // never uploaded: free their rows
			}
			return err
		}
		u.pending.Add(1)
		m := f.MemoryBytes()
		u.inflight.Add(m)
		u.queue <- queued{file: f, weight: w, memory: m, intent: tickets[f.SourcePartition]} // never blocks for long: the semaphore bounds the queue
	}
	return u.failed()
}

// waitProgress returns when a file is done since the last call, or ctx
// ends.
func (u *uploader) waitProgress(ctx context.Context) error {
	select {
	case <-u.progress:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sendObject queues a plain object; like files, it is in storage once
// wait returns.
func (u *uploader) sendObject(ctx context.Context, key string, data []byte) error {
	return u.sendObjectAfter(ctx, key, data, nil, "", -1, -1)
}

// sendDeadLetters queues a dead-letter file as a data file is sent: after
// an intent naming it, so that the partition's checkpoint settles it, a
// fenced run withdraws it and a claiming run's recovery deletes it when no
// checkpoint covers it.
func (u *uploader) sendDeadLetters(ctx context.Context, f dlqFile) error {
	if err := u.failed(); err != nil {
		return err
	}
	return u.sendObjectAfter(ctx, f.key, f.data, u.writeIntent(f.partition, f.firstOffset, []string{f.key}), f.partition, f.firstOffset, f.lastOffset)
}

// sendObjectAfter queues an object, to be written once its intent in (if
// not nil) is; part, first and last are the source range it holds.
func (u *uploader) sendObjectAfter(ctx context.Context, key string, data []byte, in *intentTicket, part string, first, last int64) error {
	if err := u.failed(); err != nil {
		return err
	}
	w := max(1, min(int64(len(data)), u.maxBytes))
	if err := u.bytes.Acquire(ctx, w); err != nil {
		return err
	}
	u.pending.Add(1)
	u.queue <- queued{key: key, data: data, weight: w, intent: in, partition: part, first: first, last: last}
	return nil
}

// weight is what a file counts against the byte bound; a file larger than
// the bound takes all of it, so it still goes through, alone.
func (u *uploader) weight(f *writer.File) int64 {
	return max(1, min(f.Size(), u.maxBytes))
}

// close waits for every queued file to be uploaded and returns the first
// failure. Files are durable once it returns nil. It may be called again.
func (u *uploader) close() error {
	u.closeOnce.Do(func() {
		close(u.queue)
		u.wg.Wait()
		u.abort()
	})
	return u.failed()
}
