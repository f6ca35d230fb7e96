package commit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
)

// A rebuild writes a partition's checkpoint anew from the files the lake
// holds, when the checkpoint is corrupt or gone; exporting the partition
// again from the source's start would write every row a second time.
//
// Which offset is durable follows from the protocol's rule that a
// checkpoint is written only when nothing of its partition is buffered:
// every record at or below a checkpoint's offset is in a file of a
// committed round, and a round not committed holds only records past the
// last checkpoint. So:
//
//  1. files no pending intent names were committed: the offset starts at
//     the largest last offset among them (-1 for none);
//  2. a file of a pending intent whose first offset is at or below the
//     offset so far must be of a committed round (an uncommitted one
//     starts past the true checkpoint, which is at or past the offset so
//     far): it is adopted and the offset grows to its last offset; this
//     repeats until no more such files. A file whose offsets overlap a
//     kept file of its table is not adopted: it is another run's copy of
//     rows already kept (a run fenced, or killed before it deleted its
//     files), and is deleted with those of step 3;
//  3. every other file of a pending intent is deleted (those never
//     uploaded are forgotten), and the intents removed: their records lie
//     past the offset and are read again.
//
// The offset found is at or below the lost checkpoint's (records past the
// last one stored, such as a trailing DDL or metadata record, are read
// again), and every record at or below it is in the files kept: a rerun
// writes every row exactly once.

// FileRange is one file of the lake that holds records of a source
// partition: a data file (Table set) or a dead-letter file.
type FileRange struct {
	Key         string
	Table       string
	Version     int
	FirstOffset int64
	LastOffset  int64
}

// RebuildConfig is what Rebuild needs.
type RebuildConfig struct {
	Store     Store
	Partition string
	// Force rebuilds a checkpoint that is readable, and goes ahead
	// despite pending intents, which a running instance may be writing.
	Force bool
	// Files lists the lake's files holding records of the partition, with
	// the offsets each covers.
	Files func(ctx context.Context) ([]FileRange, error)
	// Schema returns what the checkpoint carries besides the offset,
	// given the files kept: the schema catalog snapshot (for sources that
	// resume from a stored offset) and the released version marks (for
	// sources replayed from their beginning). Nil: neither.
	Schema func(ctx context.Context, kept []FileRange) (json.RawMessage, []checkpoint.VersionMark, error)
	// Run names the rebuild as the checkpoint's owner; default a new id
	// prefixed "rebuild-".
	Run    string
	Logger *slog.Logger     // default: discard
	Now    func() time.Time // default: time.Now
}

// RebuildResult says what Rebuild found and wrote.
type RebuildResult struct {
	Existed bool  // an object stood where the checkpoint goes
	Corrupt error // why it was not a checkpoint, nil if it was one or none existed
	// Before is the checkpoint replaced, when it was readable.
	Before    checkpoint.Checkpoint
	After     checkpoint.Checkpoint
	Files     int // files of the partition kept
	Adopted   int // files of pending intents kept
	Deleted   int // files of pending intents deleted: their records are read again
	Forgotten int // files of pending intents that were never uploaded
	Intents   int // pending intents removed
}

// Rebuild writes partition's checkpoint from the lake's files (by the
// rules at the top of this file), with the conditional write that fences: it
// fails with checkpoint.ErrFenced if anyone wrote the checkpoint while it
// ran. Without Force it refuses a readable checkpoint and pending intents.
func Rebuild(ctx context.Context, cfg RebuildConfig) (RebuildResult, error) {
	if cfg.Run == "" {
		cfg.Run = "rebuild-" + NewRunID()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	var res RebuildResult
	s, name := cfg.Store, cfg.Partition
	h, corrupt, err := checkpoint.LoadStored(ctx, s, name)
	if err != nil {
		return res, err
	}
	res.Existed, res.Corrupt = h.Found, corrupt
	if h.Found && corrupt == nil {
		res.Before = h.Checkpoint
		if !cfg.Force {
			return res, fmt.Errorf("checkpoint %s is readable (offset %d, written by run %s at %s): nothing to rebuild; an instance may own the partition. Stop every instance that exports it, then rerun with --force to replace it by what the lake holds",
				checkpoint.Key(name), h.Offset, h.Owner, h.WrittenAt.Format(time.RFC3339))
		}
	}
	intents, err := checkpoint.ListIntents(ctx, s, name)
	if err != nil {
		return res, err
	}
	if len(intents) > 0 && !cfg.Force {
		return res, fmt.Errorf("partition %s has %d pending intents (the first of run %s): an instance may be writing it now, or a run stopped before its checkpoint. Stop every instance that exports it, then rerun with --force", name, len(intents), intents[0].Owner)
	}
	files, err := cfg.Files(ctx)
	if err != nil {
		return res, fmt.Errorf("rebuild %s: %w", name, err)
	}
	if !h.Found && len(intents) == 0 && len(files) == 0 {
		// Most likely a mistyped name: a checkpoint written for it
		// would sit in the lake, never read, and hide the mistake.
		return res, fmt.Errorf("%w: %s has no checkpoint, no pending intent and no file in this lake, so there is nothing to rebuild; %s",
			ErrUnknownPartition, name, knownPartitions(ctx, s))
	}
	kept, offset, err := settle(ctx, s, files, intents, &res)
	if err != nil {
		return res, fmt.Errorf("rebuild %s: %w", name, err)
	}
	res.Files = len(kept)
	c := checkpoint.Checkpoint{Partition: name, Offset: offset, Owner: cfg.Run}
	if cfg.Schema != nil {
		if c.Catalog, c.WrittenVersions, err = cfg.Schema(ctx, kept); err != nil {
			return res, fmt.Errorf("rebuild %s: %w", name, err)
		}
	}
	h.Checkpoint = c
	if err := h.Save(ctx, s, cfg.Now()); err != nil {
		return res, err
	}
	res.After = h.Checkpoint
	cfg.Logger.Info("checkpoint rebuilt from the lake", "partition", name, "offset", offset, "files", res.Files,
		"adopted", res.Adopted, "deleted", res.Deleted, "forgotten", res.Forgotten)
	return res, nil
}

// ErrUnknownPartition is wrapped by Rebuild's error for a partition the
// lake holds nothing of.
var ErrUnknownPartition = errors.New("unknown partition")

// knownPartitions names the partitions the lake has checkpoints of, for
// an error about one it has not.
func knownPartitions(ctx context.Context, s Store) string {
	dir := strings.TrimSuffix(checkpoint.Key(""), ".json")
	keys, err := s.List(ctx, dir)
	if err != nil {
		return "the partitions with checkpoints could not be listed: " + err.Error()
	}
	var names []string
	for _, k := range keys {
		if n, ok := strings.CutSuffix(strings.TrimPrefix(k, dir), ".json"); ok && !strings.Contains(n, "/") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "the lake has no partition checkpoint at all"
	}
	slices.Sort(names)
	const most = 20
	more := ""
	if len(names) > most {
		names, more = names[:most], fmt.Sprintf(" and %d more", len(names)-most)
	}
	return "the partitions the lake has checkpoints of are " + strings.Join(names, ", ") + more
}

// settle applies steps 1 to 3: it returns the files kept and the offset
// they make durable, after deleting the files of pending intents past it
// and the intents.
func settle(ctx context.Context, s Store, files []FileRange, intents []checkpoint.Intent, res *RebuildResult) ([]FileRange, int64, error) {
	pendingFile := map[string]bool{}
	for _, in := range intents {
		for _, k := range in.Files {
			pendingFile[k] = true
		}
	}
	var kept []FileRange
	pending := map[string]FileRange{}
	offset := int64(-1)
	for _, f := range files {
		if pendingFile[f.Key] {
			pending[f.Key] = f
			continue
		}
		kept = append(kept, f)
		offset = max(offset, f.LastOffset)
	}
	// A pending file whose rows a kept file of its table already holds
	// is another run's copy of them (one fenced, or killed before it
	// deleted its files): deleted, not adopted.
	copied := func(f FileRange) bool {
		return slices.ContainsFunc(kept, func(k FileRange) bool {
			return k.Table == f.Table && k.FirstOffset <= f.LastOffset && f.FirstOffset <= k.LastOffset
		})
	}
	for grew := true; grew; {
		grew = false
		for _, k := range slices.Sorted(maps.Keys(pending)) {
			f := pending[k]
			if f.FirstOffset <= offset && !copied(f) {
				kept = append(kept, f)
				offset = max(offset, f.LastOffset)
				delete(pending, k)
				res.Adopted++
				grew = true
			}
		}
	}
	keptKey := map[string]bool{}
	for _, f := range kept {
		keptKey[f.Key] = true
	}
	for _, in := range intents {
		for _, k := range in.Files {
			if _, past := pending[k]; past {
				if err := s.Delete(ctx, k); err != nil {
					return nil, 0, fmt.Errorf("delete %s, a file past the rebuilt offset %d: %w", k, offset, err)
				}
				res.Deleted++
				continue
			}
			if !keptKey[k] {
				res.Forgotten++ // named, never uploaded (a PUT is atomic)
			}
		}
		if err := s.Delete(ctx, in.Key); err != nil {
			return nil, 0, fmt.Errorf("remove intent %s: %w", in.Key, err)
		}
		res.Intents++
	}
	return kept, offset, nil
}
