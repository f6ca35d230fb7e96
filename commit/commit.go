// Package commit keeps the exactly-once protocol between the files a run
// uploads and the source positions it acknowledges. Object storage has no
// rename and no multi-object transaction, so a commit is a sequence of
// single-object writes, each one safe to crash after:
//
//  1. Claim (Committer.Take, when a partition is first seen or assigned):
//     the partition's checkpoint is loaded; the intents it covers (written
//     by the run that wrote it, at or below its offset) are settled, their
//     files adopted; the checkpoint is written again under this run's name,
//     which fences a previous owner still running at its next write; then
//     the files of every intent the checkpoint does not cover are deleted
//     (a file that never arrived is simply forgotten: a PUT is atomic) and
//     their records are read again. A file no intent names is never
//     uploaded, so nothing escapes this.
//  2. Intent (Committer.WriteIntent): before a data or dead-letter file is
//     uploaded, an intent naming it and the source range it holds (its
//     partition and first offset) is written.
//  3. Upload: the file is put; once the PUT succeeded it is marked
//     (Committer.Uploaded). What is not marked is not checkpointed.
//  4. Publish (optional Publisher): when every file named by the round's
//     intents is marked, the round is handed to the publisher, which makes
//     one snapshot per table recognisable by the round's id.
//  5. Checkpoint (Committer.Commit): each partition read past its
//     checkpoint gets a new one, a conditional write against the version
//     this run read or wrote, naming the round. A fenced run withdraws its
//     round's files of that partition (Committer.Withdraw) and stops.
//  6. Acknowledge: only then is the source told the new offsets, and the
//     settled intents are removed.
//
// Records replayed at or below a partition's checkpoint offset are
// durable already and are skipped (Partition.Durable). A round begins when
// the previous one ends (or the run starts); its id is the run's id and
// its number. The caller keeps one rule the protocol cannot: a partition is
// committed only when nothing of it is buffered (a commit round flushes
// every buffer first), so that "durable up to offset N" covers every file
// of it.
//
// Sources replayed from their beginning (files) share one schema catalog
// that their records rebuild; what the records alone do not tell is which
// provisional versions DML was written under (released by a hold limit, or
// read from another file first). Those marks (Committer.MarkReleased) are
// saved in every partition's checkpoint and read back before the replay.
package commit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"golang.org/x/sync/errgroup"
)

// Store is what the protocol needs from storage: plain objects, listing,
// and the conditional writes that fence.
type Store interface {
	checkpoint.Store
}

// ErrIncomplete is wrapped by Commit's error when a file named by an
// intent of the round was not marked uploaded: nothing of the round is
// checkpointed, and the next run reads its records again.
var ErrIncomplete = errors.New("round incomplete: not every file of it was uploaded")

// Config is what a Committer needs. Zero values mean the documented
// defaults.
type Config struct {
	Store Store
	// Run names this run in intents and checkpoints (the owner); default
	// a new random id (NewRunID).
	Run string
	// Catalog, when set, returns the schema catalog's snapshot to save in
	// a partition's checkpoint: for sources whose partitions are read from
	// a stored position, not from their beginning. When nil, the released
	// version marks are saved instead.
	Catalog func(partition string) (json.RawMessage, error)
	// Ack tells the source what is durable (Kafka commits offsets); nil
	// for sources whose progress is the checkpoint itself (files).
	Ack func(ctx context.Context, offsets map[string]int64) error
	// Publisher, when set, publishes each complete round to a table
	// catalog before its checkpoints are written. Default: none.
	Publisher Publisher
	Logger    *slog.Logger     // default: discard
	Now       func() time.Time // default: time.Now
}

// File is one object a round uploaded.
type File struct {
	Partition   string // source partition
	Table       string // empty for a dead-letter file
	Key         string
	Version     int // schema version of a data file
	Rows        int
	Bytes       int64
	FirstOffset int64
	LastOffset  int64
}

// Committer runs the protocol for one run. Take, WriteIntent, Uploaded
// and Withdraw are safe for concurrent use; the partition state (Adopt,
// Partition, Commit, Forget, the marks) belongs to one goroutine.
type Committer struct {
	store   Store
	run     string
	log     *slog.Logger
	now     func() time.Time
	catalog func(string) (json.RawMessage, error)
	ack     func(context.Context, map[string]int64) error
	pub     Publisher
	round   int // this run's rounds committed so far

	parts    map[string]*Partition
	released map[checkpoint.VersionMark]bool

	mu      sync.Mutex
	pending map[string]*pending // source partition → its round so far
}

// pending is a partition's part of the round: the intents written and
// the files they name, and which of those are uploaded.
type pending struct {
	intents  []string
	files    []string
	uploaded map[string]File
}

// Partition is what the run knows of one source partition it owns.
type Partition struct {
	name     string
	cp       *checkpoint.Handle
	lastRead int64
}

// Durable reports whether the record at offset is in storage already:
// replayed, it is skipped.
func (p *Partition) Durable(offset int64) bool { return offset <= p.cp.Offset }

// Read records that the record at offset was handled: the next commit
// makes it durable.
func (p *Partition) Read(offset int64) { p.lastRead = offset }

// LastRead is the last offset handled in this run, -1 before any.
func (p *Partition) LastRead() int64 { return p.lastRead }

// Offset is the last durable offset, -1 for none.
func (p *Partition) Offset() int64 { return p.cp.Offset }

// Found reports whether the partition had a checkpoint when it was taken.
func (p *Partition) Found() bool { return p.cp.Found }

// Catalog is the schema catalog snapshot its checkpoint holds, if any.
func (p *Partition) Catalog() json.RawMessage { return p.cp.Catalog }

// New makes a Committer.
func New(cfg Config) *Committer {
	if cfg.Run == "" {
		cfg.Run = NewRunID()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Committer{store: cfg.Store, run: cfg.Run, log: cfg.Logger, now: cfg.Now, catalog: cfg.Catalog,
		ack: cfg.Ack, pub: cfg.Publisher, parts: map[string]*Partition{},
		released: map[checkpoint.VersionMark]bool{}, pending: map[string]*pending{}}
}

// NewRunID names a run: eight random hex digits.
func NewRunID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run is this run's id, the owner named in its intents and checkpoints.
func (c *Committer) Run() string { return c.run }

// RoundID names the round in progress: the run and its number.
func (c *Committer) RoundID() string { return c.run + "-" + strconv.Itoa(c.round+1) }

// Take is step 1 for one partition: its claim and the recovery around it.
// It touches no partition state, so the partitions of an assignment are
// taken in parallel; Adopt then records each. now is passed in because
// Config.Now need not be safe for concurrent use.
func (c *Committer) Take(ctx context.Context, name string, now time.Time) (*checkpoint.Handle, error) {
	cp, rec, err := c.claim(ctx, name, now)
	if err != nil {
		return nil, err
	}
	var release func(ctx context.Context, files []string) error
	if rp, ok := c.pub.(RecoveringPublisher); ok {
		release = func(ctx context.Context, files []string) error {
			if err := rp.Recover(ctx, files); err != nil {
				return fmt.Errorf("in the table catalog: %w", err)
			}
			return nil
		}
	}
	deleted, err := rec.DeleteUncovered(ctx, release)
	if err != nil {
		return nil, fmt.Errorf("recover partition %s: %w", name, err)
	}
	if deleted > 0 {
		c.log.Info("removed files past the checkpoint; their records are read again", "partition", name, "files", deleted, "checkpoint_offset", cp.Offset)
	}
	return cp, nil
}

// claim loads a partition's checkpoint, settles the intents it covers and
// claims the partition for this run, before anything is deleted: a run
// still writing the partition is fenced first, so the files of its round
// in flight, deleted next, can never be committed by it. A checkpoint
// written between the load and the claim (the previous owner's last
// commit at a rebalance) is loaded again, a few times.
func (c *Committer) claim(ctx context.Context, name string, now time.Time) (*checkpoint.Handle, *checkpoint.Recovery, error) {
	for attempt := 0; ; attempt++ {
		cp, err := checkpoint.Load(ctx, c.store, name)
		if err != nil {
			return nil, nil, err
		}
		rec, err := checkpoint.StartRecovery(ctx, c.store, cp.Checkpoint)
		if err != nil {
			return nil, nil, fmt.Errorf("recover partition %s: %w", name, err)
		}
		err = cp.Claim(ctx, c.store, c.run, now)
		if err == nil {
			return cp, rec, nil
		}
		if !errors.Is(err, checkpoint.ErrFenced) {
			return nil, nil, err
		}
		if attempt == 2 {
			return nil, nil, fmt.Errorf("partition %s is being exported by another instance, which keeps writing its checkpoint: %w; run one instance per input (for Kafka, one consumer group member per partition)", name, err)
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// Adopt records a partition taken with checkpoint cp as owned; without a
// Catalog snapshot function, the version marks cp names are added.
func (c *Committer) Adopt(name string, cp *checkpoint.Handle) *Partition {
	if c.catalog == nil {
		c.AddReleased(cp.WrittenVersions)
	}
	p := &Partition{name: name, cp: cp, lastRead: -1}
	c.parts[name] = p
	return p
}

// Partition returns an owned partition, nil if it is not (yet) owned.
func (c *Committer) Partition(name string) *Partition { return c.parts[name] }

// Forget drops every partition: once committed, they may be another
// instance's next.
func (c *Committer) Forget() { c.parts = map[string]*Partition{} }

// ReadPastCheckpoint reports whether records were read past some
// partition's checkpoint, that a commit would make durable.
func (c *Committer) ReadPastCheckpoint() bool {
	for _, p := range c.parts {
		if p.lastRead > p.cp.Offset {
			return true
		}
	}
	return false
}

// Peek reads a partition's checkpoint without claiming it.
func (c *Committer) Peek(ctx context.Context, name string) (checkpoint.Checkpoint, bool, error) {
	cp, err := checkpoint.Load(ctx, c.store, name)
	if err != nil {
		return checkpoint.Checkpoint{}, false, err
	}
	return cp.Checkpoint, cp.Found, nil
}

// WriteIntent is step 2: it records that the objects keys, holding records
// of partition from first on, are about to be uploaded. Once it returns
// nil they are this run's until the partition's next checkpoint settles
// them, or Withdraw deletes them.
func (c *Committer) WriteIntent(ctx context.Context, partition string, first int64, keys []string) error {
	ik, err := checkpoint.WriteIntent(ctx, c.store, partition, first, keys, c.run)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pendingOf(partition)
	p.intents = append(p.intents, ik)
	p.files = append(p.files, keys...)
	return nil
}

func (c *Committer) pendingOf(partition string) *pending {
	p := c.pending[partition]
	if p == nil {
		p = &pending{uploaded: map[string]File{}}
		c.pending[partition] = p
	}
	return p
}

// Uploaded is step 3: f's PUT succeeded.
func (c *Committer) Uploaded(f File) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pendingOf(f.Partition).uploaded[f.Key] = f
}

// take returns and forgets a partition's part of the round.
func (c *Committer) take(partition string) *pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[partition]
	delete(c.pending, partition)
	if p == nil {
		p = &pending{uploaded: map[string]File{}}
	}
	return p
}

// round collects the round: every file its intents name, which must all
// be uploaded.
func (c *Committer) collect() (Round, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := Round{ID: c.RoundID(), Offsets: map[string]int64{}}
	missing, first := 0, ""
	for _, name := range slices.Sorted(maps.Keys(c.pending)) {
		p := c.pending[name]
		for _, k := range p.files {
			f, ok := p.uploaded[k]
			if !ok {
				if missing == 0 {
					first = k
				}
				missing++
				continue
			}
			r.Files = append(r.Files, f)
		}
	}
	if missing > 0 {
		return Round{}, fmt.Errorf("%w: %d files, %s the first; nothing of the round is checkpointed and the next run writes them again", ErrIncomplete, missing, first)
	}
	for name, p := range c.parts {
		if p.lastRead > p.cp.Offset {
			r.Offsets[name] = p.lastRead
		}
	}
	return r, nil
}

// Commit runs steps 4 to 6 for the round: every file sent must have been
// uploaded (Uploaded) before. It returns the number of partitions
// checkpointed; a partition lost to another instance is withdrawn, the
// others are still checkpointed, and the error wraps checkpoint.ErrFenced.
func (c *Committer) Commit(ctx context.Context) (int, error) {
	r, err := c.collect()
	if err != nil {
		return 0, err
	}
	var fenced error
	if c.pub != nil && len(r.Offsets) > 0 {
		if fenced, err = c.dropLost(ctx, &r); err != nil {
			return 0, err
		}
		if err := c.pub.Publish(ctx, r); err != nil {
			return 0, errors.Join(fenced, fmt.Errorf("publish round %s: %w; nothing of it is checkpointed, the next run writes it again", r.ID, err))
		}
	}
	var marks []checkpoint.VersionMark
	if c.catalog == nil {
		marks = c.ReleasedMarks() // the same for every file's checkpoint
	}
	acks := map[string]int64{}
	for _, name := range slices.Sorted(maps.Keys(r.Offsets)) {
		p := c.parts[name]
		before := p.cp.Checkpoint
		p.cp.Offset, p.cp.Round = r.Offsets[name], r.ID
		if c.catalog != nil {
			snap, err := c.catalog(name)
			if err != nil {
				p.cp.Checkpoint = before
				return len(acks), err
			}
			p.cp.Catalog = snap
		} else {
			// Every file's checkpoint keeps them all: the files share one
			// catalog, and one file's records may open a version that
			// another's held DML was written under.
			p.cp.WrittenVersions = marks
		}
		if err := p.cp.Save(ctx, c.store, c.now()); err != nil {
			p.cp.Checkpoint = before
			if !errors.Is(err, checkpoint.ErrFenced) {
				return len(acks), err
			}
			// Lost to another instance: its files are withdrawn, and the
			// other partitions are still checkpointed (or found lost too)
			// before the run stops.
			fenced = errors.Join(fenced, err)
			if werr := c.unpublish(ctx, r, name); werr != nil {
				fenced = errors.Join(fenced, werr)
				continue
			}
			c.Withdraw(ctx, name)
			continue
		}
		if err := checkpoint.Settle(ctx, c.store, c.take(name).intents); err != nil {
			c.log.Warn("could not remove settled intents; the next start removes them", "partition", name, "error", err)
		}
		acks[name] = p.cp.Offset
	}
	if c.ack != nil && len(acks) > 0 {
		if err := c.ack(ctx, acks); err != nil {
			return len(acks), errors.Join(fenced, err)
		}
	}
	if fenced != nil {
		return len(acks), fenced
	}
	c.round++
	return len(acks), nil
}

// dropLost takes out of r, before it is published, each partition that
// another instance has taken over since this run last wrote its
// checkpoint: a fenced run must not publish what the new owner exports
// again. Their files are withdrawn as at a fenced checkpoint, and the
// returned error wraps checkpoint.ErrFenced; err is set when a checkpoint
// cannot be checked. A takeover after the check is caught at the
// checkpoint, which takes back what was published.
func (c *Committer) dropLost(ctx context.Context, r *Round) (fenced, err error) {
	for _, name := range slices.Sorted(maps.Keys(r.Offsets)) {
		lost := c.parts[name].cp.Owned(ctx, c.store)
		if lost == nil {
			continue
		}
		if !errors.Is(lost, checkpoint.ErrFenced) {
			return nil, fmt.Errorf("round %s: %w; nothing of it is published or checkpointed", r.ID, lost)
		}
		fenced = errors.Join(fenced, lost)
		delete(r.Offsets, name)
		r.Files = slices.DeleteFunc(r.Files, func(f File) bool { return f.Partition == name })
		c.Withdraw(ctx, name)
	}
	return fenced, nil
}

// unpublish takes a fenced partition's files of round r back from the
// publisher, before they are deleted.
func (c *Committer) unpublish(ctx context.Context, r Round, partition string) error {
	wp, ok := c.pub.(WithdrawingPublisher)
	if !ok {
		return nil
	}
	var files []File
	for _, f := range r.Files {
		if f.Partition == partition {
			files = append(files, f)
		}
	}
	if err := wp.Withdraw(ctx, files); err != nil {
		c.log.Error("could not take a lost partition's files back from the table catalog; they are kept, for the partition's next claim to withdraw and delete them", "partition", partition, "files", len(files), "error", err)
		return fmt.Errorf("withdraw round %s of lost partition %s from the table catalog: %w", r.ID, partition, err)
	}
	return nil
}

// Withdraw deletes the files (data and dead letters) this run wrote for a
// partition it has lost since its last checkpoint, and their intents: the
// new owner's recovery may have run before they were uploaded, and would
// never see them.
func (c *Committer) Withdraw(ctx context.Context, name string) {
	p := c.take(name)
	failed := false
	for _, k := range p.files {
		if err := c.store.Delete(ctx, k); err != nil {
			failed = true
			c.log.Warn("could not delete a file of a partition this instance lost; its intent is kept, for the partition's next claim to delete it", "partition", name, "key", k, "error", err)
		}
	}
	if !failed {
		for _, k := range p.intents {
			if err := c.store.Delete(ctx, k); err != nil {
				c.log.Warn("could not delete an intent of a partition this instance lost; its files are gone", "partition", name, "key", k, "error", err)
			}
		}
	}
	c.log.Warn("partition taken over by another instance: this instance's files of it since its last checkpoint are deleted", "partition", name, "files", len(p.files))
}

// MarkReleased records that DML was written under the provisional version
// m, for the checkpoints of sources replayed from their beginning.
func (c *Committer) MarkReleased(m checkpoint.VersionMark) { c.released[m] = true }

// Released reports whether m was marked, in this run or (from the
// checkpoints) an earlier one.
func (c *Committer) Released(m checkpoint.VersionMark) bool { return c.released[m] }

// AddReleased adds the marks a checkpoint names.
func (c *Committer) AddReleased(marks []checkpoint.VersionMark) {
	for _, m := range marks {
		c.released[m] = true
	}
}

// ReleasedMarks lists the marks in a stable order, for a checkpoint.
func (c *Committer) ReleasedMarks() []checkpoint.VersionMark {
	if len(c.released) == 0 {
		return nil
	}
	out := slices.Collect(maps.Keys(c.released))
	slices.SortFunc(out, func(a, b checkpoint.VersionMark) int {
		if n := strings.Compare(a.Table, b.Table); n != 0 {
			return n
		}
		if a.Version != b.Version {
			return a.Version - b.Version
		}
		return strings.Compare(a.OpenedAtPos, b.OpenedAtPos)
	})
	return out
}

// LoadReleasedMarks reads the version marks of every input file's
// checkpoint before any record is read: a file read early may refresh a
// version whose mark only a later file's checkpoint holds (the run that
// marked it did not rewrite the earlier file's). Only read, not claimed;
// a checkpoint that cannot be read now is read again when its file is.
func (c *Committer) LoadReleasedMarks(ctx context.Context, partitions []string) {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, name := range partitions {
		g.Go(func() error {
			cp, err := checkpoint.Load(gctx, c.store, name)
			if err != nil {
				c.log.Warn("could not read an input file's checkpoint before the run; it is read again with the file", "partition", name, "error", err)
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			c.AddReleased(cp.WrittenVersions)
			return nil
		})
	}
	g.Wait()
}
