package pipeline

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

type heldRecord struct {
	data []byte
	msg  source.Message
	at   time.Time
}

// holdQueue keeps DML records whose table waits for its (refreshed)
// metadata, per catalog and table (heldKey), in arrival order, and counts
// them: n and bytes are always the records and bytes it holds, which the
// hold limits bound.
type holdQueue struct {
	recs       map[string][]heldRecord
	n          int
	bytes      int64
	maxRecords int
	maxBytes   int64
	maxAge     time.Duration
}

func newHoldQueue(maxRecords int, maxBytes int64, maxAge time.Duration) *holdQueue {
	return &holdQueue{recs: map[string][]heldRecord{}, maxRecords: maxRecords, maxBytes: maxBytes, maxAge: maxAge}
}

// add holds a copy of the record m; first reports that it is the first
// of its key, over that a hold limit is passed.
func (h *holdQueue) add(key string, m *source.Message, data []byte, at time.Time) (first, over bool) {
	rec := heldRecord{data: append([]byte(nil), data...), msg: *m, at: at}
	rec.msg.Value = rec.data
	h.recs[key] = append(h.recs[key], rec)
	h.n++
	h.bytes += int64(len(rec.data))
	return len(h.recs[key]) == 1, h.n > h.maxRecords || h.bytes > h.maxBytes
}

// holding reports whether records of key are held.
func (h *holdQueue) holding(key string) bool { return len(h.recs[key]) > 0 }

// empty reports whether nothing is held.
func (h *holdQueue) empty() bool { return h.n == 0 }

// take returns and forgets the records of key.
func (h *holdQueue) take(key string) []heldRecord {
	recs := h.recs[key]
	delete(h.recs, key)
	h.n -= len(recs)
	for i := range recs {
		h.bytes -= int64(len(recs[i].data))
	}
	return recs
}

// oldest is the key holding the oldest record.
func (h *holdQueue) oldest() string {
	var oldest string
	var at time.Time
	for k, recs := range h.recs {
		if oldest == "" || recs[0].at.Before(at) {
			oldest, at = k, recs[0].at
		}
	}
	return oldest
}

// keys lists the keys held, sorted; due only those whose oldest record
// is maxAge old at now.
func (h *holdQueue) keys() []string { return h.due(time.Time{}, false) }

func (h *holdQueue) due(now time.Time, aged bool) []string {
	keys := make([]string, 0, len(h.recs))
	for k, recs := range h.recs {
		if len(recs) > 0 && (!aged || now.Sub(recs[0].at) >= h.maxAge) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// heldTable is the table of a held key.
func heldTable(key string) string { return key[strings.IndexByte(key, 0)+1:] }

func (r *runner) heldKey(partition, table string) string {
	return r.cats.key(partition) + "\x00" + table
}

// hold keeps a DML record until its table's metadata arrives.
func (r *runner) hold(ctx context.Context, m *source.Message, data []byte, table string) error {
	first, over := r.held.add(r.heldKey(m.Partition, table), m, data, r.cfg.Now())
	if first {
		r.log.Info("holding DML until metadata arrives", "table", table, "source", m.Position())
	}
	if over {
		return r.releaseOldest(ctx)
	}
	return nil
}

// release replays the held records of table. With force, they are decoded
// with whatever version is in force (or rejected if none); otherwise only
// when the table has a version that does not hold.
func (r *runner) release(ctx context.Context, catalog *arrowschema.Catalog, table string, force bool) error {
	var limit error // the reject limit passed: reported once all are placed
	for _, key := range r.held.keys() {
		held := r.held.recs[key]
		if heldTable(key) != table || r.cats.of(held[0].msg.Partition) != catalog {
			continue
		}
		v := catalog.Current(table)
		if !force && (v == nil || v.Hold) {
			return nil
		}
		if force && v != nil && v.Provisional {
			// Written under a version that holds: a refresh with other
			// columns must then open the next one. A rerun that skips
			// these rows as durable cannot tell, so the checkpoints of a
			// source replayed from its start say it.
			v.MarkWritten()
			if !r.cats.perPartition {
				r.commits.MarkReleased(versionMark(v))
			}
		}
		held = r.held.take(key)
		r.log.Info("releasing held DML", "table", table, "records", len(held), "forced", force)
		for i := range held {
			if err := r.handle(ctx, &held[i].msg, held[i].data, true); err != nil {
				if errors.Is(err, ErrTooManyRejects) {
					// That record is dead-lettered; the ones after it,
					// out of the hold now and covered by the next
					// checkpoint, must still be written or rejected.
					limit = err
					continue
				}
				return err
			}
		}
	}
	return limit
}

func (r *runner) releaseKey(ctx context.Context, key string) error {
	if !r.held.holding(key) {
		return nil
	}
	return r.release(ctx, r.cats.of(r.held.recs[key][0].msg.Partition), heldTable(key), true)
}

// releaseOldest frees the table holding the oldest record when a hold
// bound is reached.
func (r *runner) releaseOldest(ctx context.Context) error {
	oldest := r.held.oldest()
	r.log.Warn("hold limit reached: releasing DML without refreshed metadata", "table", heldTable(oldest))
	return r.releaseKey(ctx, oldest)
}
