// Package checkpoint records what is safely in storage, per source
// partition, and keeps the intent → upload → checkpoint protocol that makes
// output exactly-once across crashes:
//
//  1. before a data file (or a dead-letter file) is uploaded, an intent
//     naming it is written;
//  2. the file is uploaded (a PUT is atomic);
//  3. once every buffer of a partition is flushed and uploaded, the
//     partition's checkpoint is written with a conditional write that
//     fences any other instance still writing it; only then is the source
//     acknowledged;
//  4. on start (or when a partition is assigned), the instance claims the
//     partition (Claim: the checkpoint written again under its name, so
//     that the previous owner, if it still runs, is fenced at its next
//     write), then Recover deletes every file an intent names that the
//     checkpoint does not cover: those records are read again and the
//     files written again.
//
// Because a checkpoint is only written when nothing of its partition is
// buffered, "durable up to offset N" covers every table, version and date
// of the partition, and the saved catalog snapshot is the schema state at
// exactly that offset. Sources replayed from their beginning (files) save
// no snapshot, since the replay rebuilds the catalog from the records;
// they save instead the provisional versions that held DML was written
// under when a hold limit released it (WrittenVersions), which the records
// alone do not tell.
package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// Store is what the protocol needs from storage.
type Store interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	List(ctx context.Context, prefix string) ([]string, error)
	Delete(ctx context.Context, key string) error
	PutIfAbsent(ctx context.Context, key string, data []byte) (string, error)
	PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error)
	GetWithETag(ctx context.Context, key string) ([]byte, string, error)
	ETag(ctx context.Context, key string) (string, error)
}

// ErrFenced means another instance wrote the partition's checkpoint since
// this one read it: this instance no longer owns the partition.
var ErrFenced = errors.New("checkpoint was written by another instance")

// ErrCorrupt is wrapped by Load's error when the partition's checkpoint
// object is not a checkpoint of that partition.
var ErrCorrupt = errors.New("checkpoint is corrupt")

// RebuildAdvice says what to do about a corrupt checkpoint of partition;
// readable is set when the object is a checkpoint whose content cannot be
// used, which the rebuild replaces only with --force. Moving it away
// instead would export the partition again from the source's start, every
// row a second time.
func RebuildAdvice(partition string, readable bool) string {
	force := ""
	if readable {
		force = " --force"
	}
	return fmt.Sprintf("rebuild it from the lake with `exporter checkpoint rebuild --partition %s%s` and this run's --sink (do not delete it: the partition would be exported again from the source's start, every row a second time)", partition, force)
}

const prefix = "_checkpoints/"

// Key is where a partition's checkpoint lives.
func Key(partition string) string { return prefix + "partitions/" + partition + ".json" }

func intentPrefix(partition string) string { return prefix + "intents/" + partition + "/" }

// Checkpoint is one partition's durable progress.
type Checkpoint struct {
	Version   int    `json:"version"`
	Partition string `json:"partition"`
	// Offset is the last offset whose records are all in storage.
	Offset int64 `json:"offset"`
	// Catalog is the schema catalog's snapshot at Offset, for sources
	// that do not replay from their beginning.
	Catalog   json.RawMessage `json:"catalog,omitempty"`
	WrittenAt time.Time       `json:"written_at"`
	// Owner names the run that wrote it (Claim); its intents are the ones
	// the checkpoint can cover.
	Owner string `json:"owner,omitempty"`
	// Round names the commit round that last advanced Offset (package
	// commit): a table-catalog publisher recognises by it, on recovery,
	// whether its tables hold that round. Empty before the first round,
	// and in checkpoints of versions that did not name rounds.
	Round string `json:"round,omitempty"`
	// WrittenVersions, for sources that save no Catalog (files, replayed
	// from their beginning), are the provisional schema versions that DML
	// was written under: released by a hold limit (or by a commit), or
	// read from an input file before the refresh in another. Whether
	// that happened depends on time, limits and the order files are read
	// in, not on the records of one file, so a
	// replay that skips those rows as durable cannot tell: it marks these
	// versions written again, so that their refresh opens the same next
	// version instead of replacing them. Left out when empty; a version of
	// the exporter that does not know the field ignores it.
	WrittenVersions []VersionMark `json:"written_versions,omitempty"`
}

// VersionMark names one schema version of a table: its number and the
// source position of the record that opened it.
type VersionMark struct {
	Table       string `json:"table"`
	Version     int    `json:"version"`
	OpenedAtPos string `json:"opened_at_pos,omitempty"`
}

// Handle is a loaded checkpoint and the ETag that fences the next write.
type Handle struct {
	Checkpoint
	Found bool
	etag  string
}

// Decode parses a checkpoint object.
func Decode(data []byte) (Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return Checkpoint{}, err
	}
	if c.Version != 2 {
		return Checkpoint{}, fmt.Errorf("checkpoint format version %d is not 2", c.Version)
	}
	if c.Partition == "" || c.Offset < -1 {
		return Checkpoint{}, fmt.Errorf("checkpoint names no partition or has offset %d", c.Offset)
	}
	for _, m := range c.WrittenVersions {
		if m.Table == "" || m.Version < 1 {
			return Checkpoint{}, fmt.Errorf("checkpoint names a written version %d of table %q", m.Version, m.Table)
		}
	}
	return c, nil
}

// Encode renders a checkpoint object.
func Encode(c Checkpoint) []byte {
	c.Version = 2
	data, _ := json.Marshal(c) // cannot fail: plain fields and valid raw JSON
	return data
}

// Load reads a partition's checkpoint.
func Load(ctx context.Context, s Store, partition string) (*Handle, error) {
	key := Key(partition)
	// The ETag of what was read, not of what is there a moment later: a
	// claim made with a later writer's ETag would replace its checkpoint
	// with an older one, and the records between them would be exported
	// twice.
	data, etag, err := s.GetWithETag(ctx, key)
	if errors.Is(err, store.ErrNotExist) {
		return &Handle{Checkpoint: Checkpoint{Partition: partition, Offset: -1}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", key, err)
	}
	c, err := decodeOf(data, partition)
	if err != nil {
		return nil, fmt.Errorf("%w: %s (%v); %s", ErrCorrupt, key, err, RebuildAdvice(partition, false))
	}
	return &Handle{Checkpoint: c, Found: true, etag: etag}, nil
}

// decodeOf decodes partition's checkpoint object.
func decodeOf(data []byte, partition string) (Checkpoint, error) {
	c, err := Decode(data)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Partition != partition {
		return Checkpoint{}, fmt.Errorf("it belongs to partition %q", c.Partition)
	}
	return c, nil
}

// LoadStored reads the object that holds partition's checkpoint, whether
// it is one or not, for a rebuild: the Handle's Save replaces exactly
// that object (ErrFenced if anyone wrote it since), or creates it when
// there is none. corrupt is why the object is not a checkpoint of the
// partition, nil when it is one (then the Handle holds it) or is absent.
func LoadStored(ctx context.Context, s Store, partition string) (h *Handle, corrupt, err error) {
	key := Key(partition)
	h = &Handle{Checkpoint: Checkpoint{Partition: partition, Offset: -1}}
	data, etag, err := s.GetWithETag(ctx, key)
	if errors.Is(err, store.ErrNotExist) {
		return h, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read checkpoint %s: %w", key, err)
	}
	h.Found, h.etag = true, etag
	c, err := decodeOf(data, partition)
	if err != nil {
		return h, err, nil
	}
	h.Checkpoint = c
	return h, nil, nil
}

// Save writes the checkpoint, refusing if another instance wrote it since
// it was loaded (ErrFenced).
func (h *Handle) Save(ctx context.Context, s Store, now time.Time) error {
	h.WrittenAt = now.UTC()
	key := Key(h.Partition)
	data := Encode(h.Checkpoint)
	// The new ETag comes from the write's own response: read apart, it
	// could be the ETag of a claim made just after, and this instance
	// would go on writing, unfenced, a partition it no longer owns.
	var etag string
	var err error
	if h.Found {
		etag, err = s.PutIfMatch(ctx, key, data, h.etag)
	} else {
		etag, err = s.PutIfAbsent(ctx, key, data)
	}
	if errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("partition %s: %w; this instance stops writing it", h.Partition, ErrFenced)
	}
	if errors.Is(err, store.ErrOutcomeUnknown) {
		// Not ErrFenced: the write may have landed, and what it covers
		// must not be withdrawn. The next start reads which it was.
		return fmt.Errorf("write checkpoint %s: %w; stopping, the next start reads the checkpoint and recovers from it", key, err)
	}
	if err != nil {
		return fmt.Errorf("write checkpoint %s: %w", key, err)
	}
	if etag == "" {
		return fmt.Errorf("write checkpoint %s: the store returned no ETag, which fencing needs", key)
	}
	h.Found, h.etag = true, etag
	return nil
}

// Owned checks that the checkpoint is still the one this handle last
// read or wrote: ErrFenced when another instance has written it since
// (taken the partition over). A check, not a lock: the takeover may come
// just after it, and the next Save is fenced then.
func (h *Handle) Owned(ctx context.Context, s Store) error {
	if !h.Found {
		return nil // never written: the next Save is a put-if-absent, which fences
	}
	etag, err := s.ETag(ctx, Key(h.Partition))
	if errors.Is(err, store.ErrNotExist) || err == nil && etag != h.etag {
		return fmt.Errorf("partition %s: %w; this instance stops writing it", h.Partition, ErrFenced)
	}
	if err != nil {
		return fmt.Errorf("check checkpoint %s: %w", Key(h.Partition), err)
	}
	return nil
}

// Claim takes the partition for the run owner: the checkpoint is written
// again, unchanged but for its owner, so that an instance that still
// believes it owns the partition is fenced at its next write (ErrFenced
// here means another one wrote it first). Recover must be given the
// checkpoint as it was before the claim.
func (h *Handle) Claim(ctx context.Context, s Store, owner string, now time.Time) error {
	h.Owner = owner
	return h.Save(ctx, s, now)
}

// intent is the content of an intent object: the data files (or the
// dead-letter file) about to be uploaded (Key for one, Keys for a batch;
// readers accept both), and the run that wrote it.
type intent struct {
	Key         string   `json:"key,omitempty"`
	Keys        []string `json:"keys,omitempty"`
	FirstOffset int64    `json:"first_offset"`
	Owner       string   `json:"owner,omitempty"`
}

// Intent is a pending intent object: files about to be uploaded, or
// uploaded and not yet covered by a checkpoint, or covered and not yet
// removed (Settle).
type Intent struct {
	Key         string   // the intent object's key
	Partition   string   // the source partition whose records the files hold
	Files       []string // the data or dead-letter files it names
	FirstOffset int64
	Owner       string // the run that wrote it
}

// ListIntents reads partition's pending intents, in the order of their
// first offsets. An intent removed while it is listed is left out.
func ListIntents(ctx context.Context, s Store, partition string) ([]Intent, error) {
	pfx := intentPrefix(partition)
	keys, err := s.List(ctx, pfx)
	if err != nil {
		return nil, fmt.Errorf("list intents of %s: %w", partition, err)
	}
	return readIntents(ctx, s, keys, func(k string) (string, string) { return partition, k[len(pfx):] })
}

// ListAllIntents reads the pending intents of every source partition,
// through one listing: what the jobs beside the exporter (maintenance)
// must leave alone. An intent removed while it is listed is left out.
func ListAllIntents(ctx context.Context, s Store) ([]Intent, error) {
	pfx := prefix + "intents/"
	keys, err := s.List(ctx, pfx)
	if err != nil {
		return nil, fmt.Errorf("list the pending intents: %w", err)
	}
	return readIntents(ctx, s, keys, func(k string) (string, string) {
		rest := k[len(pfx):]
		if i := strings.LastIndexByte(rest, '/'); i > 0 {
			return rest[:i], rest[i+1:]
		}
		return "", "" // not in a partition's folder: not ours
	})
}

// readIntents reads the intents among keys; split gives a key's partition
// and its object name within the partition's folder.
func readIntents(ctx context.Context, s Store, keys []string, split func(key string) (partition, name string)) ([]Intent, error) {
	var out []Intent
	for _, k := range keys {
		partition, name := split(k)
		if _, err := strconv.ParseInt(strings.SplitN(name, "-", 2)[0], 10, 64); err != nil {
			continue // not ours
		}
		data, err := s.Get(ctx, k)
		if errors.Is(err, store.ErrNotExist) {
			continue // settled meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("read intent %s: %w", k, err)
		}
		var in intent
		if err := json.Unmarshal(data, &in); err != nil || (in.Key == "" && len(in.Keys) == 0) {
			return nil, fmt.Errorf("intent %s is corrupt: delete it and the files it names", k)
		}
		files := in.Keys
		if in.Key != "" {
			files = append(files, in.Key)
		}
		out = append(out, Intent{Key: k, Partition: partition, Files: files, FirstOffset: in.FirstOffset, Owner: in.Owner})
	}
	return out, nil
}

// IntentKey is where the intent for a data file of partition goes.
func IntentKey(partition string, firstOffset int64, dataKey string) string {
	sum := sha256.Sum256([]byte(dataKey))
	return fmt.Sprintf("%s%020d-%s.json", intentPrefix(partition), firstOffset, hex.EncodeToString(sum[:8]))
}

// WriteIntent records that the objects dataKeys (data files, or a
// dead-letter file), holding records of partition from firstOffset (the
// smallest first offset among them) on, are about to be uploaded. One
// intent for the files flushed together (hundreds when a memory budget
// flushes many tables at once) saves a write per file; recovery deletes
// them all, which is right because files never span a checkpoint: a
// commit flushes every buffer first.
func WriteIntent(ctx context.Context, s Store, partition string, firstOffset int64, dataKeys []string, owner string) (string, error) {
	if len(dataKeys) == 0 {
		return "", fmt.Errorf("write intent for %s: no data files", partition)
	}
	key := IntentKey(partition, firstOffset, dataKeys[0])
	in := intent{FirstOffset: firstOffset, Owner: owner}
	if len(dataKeys) == 1 {
		in.Key = dataKeys[0]
	} else {
		in.Keys = dataKeys
	}
	data, _ := json.Marshal(in)
	if err := s.Put(ctx, key, data); err != nil {
		return "", fmt.Errorf("write intent %s: %w", key, err)
	}
	return key, nil
}

// Recover makes storage agree with the checkpoint c of a partition, as it
// was loaded, in two steps around the claim. StartRecovery, before it: an
// intent of the run that wrote c, at or before its offset, was committed
// by it, so the intent is removed and its files kept; this needs no
// fencing, and done first, a claim whose deletions then fail leaves
// nothing committed to be judged by the wrong owner. DeleteUncovered,
// after it, lists the intents again (the previous owner may have written
// more until the claim) and deletes the files of every one c does not
// cover: they hold records that will be read again (whole or not: a PUT
// is atomic), past the offset or written by a run that no longer owned
// the partition, and can no longer commit since the claim fenced it.
type Recovery struct {
	s Store
	c Checkpoint
}

// StartRecovery settles the partition's intents that c covers.
func StartRecovery(ctx context.Context, s Store, c Checkpoint) (*Recovery, error) {
	r := &Recovery{s: s, c: c}
	if _, err := r.sweep(ctx, false, nil); err != nil {
		return nil, err
	}
	return r, nil
}

// DeleteUncovered deletes the files of the intents the checkpoint does not
// cover, then the intents; call it once the partition is claimed. release,
// when not nil, is given those files first, from the same listing (a table
// catalog that published some of them withdraws them: listed apart, a
// round a fenced owner published in between would be deleted under its
// tables); when it fails, nothing is deleted. It returns the number of
// files deleted.
func (r *Recovery) DeleteUncovered(ctx context.Context, release func(ctx context.Context, files []string) error) (int, error) {
	return r.sweep(ctx, true, release)
}

func (r *Recovery) sweep(ctx context.Context, uncovered bool, release func(ctx context.Context, files []string) error) (int, error) {
	intents, err := ListIntents(ctx, r.s, r.c.Partition)
	if err != nil {
		return 0, err
	}
	if uncovered && release != nil {
		var files []string
		for _, in := range intents {
			if !r.c.Covers(in) {
				files = append(files, in.Files...)
			}
		}
		if len(files) > 0 {
			if err := release(ctx, files); err != nil {
				return 0, err
			}
		}
	}
	deleted := 0
	for _, in := range intents {
		covered := r.c.Covers(in)
		if !covered && !uncovered {
			continue // for DeleteUncovered, after the claim
		}
		if !covered {
			for _, dk := range in.Files {
				if err := r.s.Delete(ctx, dk); err != nil {
					return deleted, err
				}
				deleted++
			}
		}
		if err := r.s.Delete(ctx, in.Key); err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// Covers says whether c's offset and owner make in's files durable: the
// intent is left only because removing it failed or has not happened
// yet, and recovery will not withdraw its files.
func (c Checkpoint) Covers(in Intent) bool {
	return in.FirstOffset <= c.Offset && in.Owner == c.Owner
}

// Recover is StartRecovery and DeleteUncovered in one, for a caller that
// already owns the partition.
func Recover(ctx context.Context, s Store, c Checkpoint) (int, error) {
	r, err := StartRecovery(ctx, s, c)
	if err != nil {
		return 0, err
	}
	return r.DeleteUncovered(ctx, nil)
}

// Settle removes intents that the checkpoint now covers.
func Settle(ctx context.Context, s Store, intents []string) error {
	for _, k := range intents {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}
