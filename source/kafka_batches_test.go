package source

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// batch encodes a record batch (magic 2, uncompressed) of values at
// offsets from base on; control makes it a marker (commit, or abort).
func batch(base int64, producer int64, attrs int16, values ...[]byte) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: v}
		body := r.AppendTo(nil)[1:] // without its length, computed below
		r.Length = int32(len(body))
		recs = append(recs, r.AppendTo(nil)...)
	}
	b := kmsg.RecordBatch{FirstOffset: base, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(max(len(values)-1, 0)),
		ProducerID: producer, ProducerEpoch: 0, FirstSequence: 0, NumRecords: int32(len(values)), Records: recs}
	b.Length = int32(batchHeaderBytes - batchLengthEnd + len(recs))
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:21], crc32.Checksum(out[batchCRCFrom:], castagnoli))
	return out
}

// marker encodes a transaction's control batch.
func marker(offset, producer int64, commit bool) []byte {
	r := kmsg.Record{Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0, 0, 0, 0}}
	if commit {
		r.Key[3] = 1
	}
	body := r.AppendTo(nil)[1:]
	r.Length = int32(len(body))
	recs := r.AppendTo(nil)
	b := kmsg.RecordBatch{FirstOffset: offset, Magic: 2, Attributes: attrTransactional | attrControl, ProducerID: producer,
		NumRecords: 1, Records: recs}
	b.Length = int32(batchHeaderBytes - batchLengthEnd + len(recs))
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:21], crc32.Checksum(out[batchCRCFrom:], castagnoli))
	return out
}

type visited struct {
	value  string
	offset int64
	skip   bool
}

func walkAll(t *testing.T, raw []byte, from int64, aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction, committed bool) ([]visited, int64) {
	t.Helper()
	var w batchWalker
	var got []visited
	next, stopped, err := w.walk(raw, from, aborted, committed, func(v []byte, at int64, skip bool) bool {
		got = append(got, visited{string(v), at, skip})
		return true
	})
	if err != nil || stopped {
		t.Fatalf("walk: stopped %v, error %v", stopped, err)
	}
	return got, next
}

// Producer 7's transaction (offsets 0-1) is aborted by its marker at 4;
// producer 8's (2-3) committed by its marker at 5; a batch of no
// transaction follows (6-7).
func TestWalkLeavesOutAbortedTransactionsAndMarkers(t *testing.T) {
	raw := slices.Concat(
		batch(0, 7, attrTransactional, []byte("a0"), []byte("a1")),
		batch(2, 8, attrTransactional, []byte("c2"), []byte("c3")),
		marker(4, 7, false),
		marker(5, 8, true),
		batch(6, -1, 0, []byte("p6"), []byte("p7")))
	aborted := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 0}}

	got, next := walkAll(t, raw, 0, aborted, true)
	want := []visited{{"", 1, true}, {"c2", 2, false}, {"c3", 3, false}, {"", 4, true}, {"", 5, true}, {"p6", 6, false}, {"p7", 7, false}}
	if !slices.Equal(got, want) || next != 8 {
		t.Errorf("read committed: visited %v, next %d; want %v, next 8", got, next, want)
	}

	got, next = walkAll(t, raw, 0, aborted, false)
	want = []visited{{"a0", 0, false}, {"a1", 1, false}, {"c2", 2, false}, {"c3", 3, false}, {"", 4, true}, {"", 5, true}, {"p6", 6, false}, {"p7", 7, false}}
	if !slices.Equal(got, want) || next != 8 {
		t.Errorf("read uncommitted: visited %v, next %d; want %v, next 8", got, next, want)
	}

	// From inside producer 8's batch, the aborted one before it unread.
	got, next = walkAll(t, raw, 3, aborted, true)
	want = []visited{{"c3", 3, false}, {"", 4, true}, {"", 5, true}, {"p6", 6, false}, {"p7", 7, false}}
	if !slices.Equal(got, want) || next != 8 {
		t.Errorf("read committed from 3: visited %v, next %d; want %v, next 8", got, next, want)
	}
}

// After its abort marker, a producer's next transaction is its own: the
// aborted one's entry does not reach it.
func TestWalkAProducersTransactionAfterAnAbortedOne(t *testing.T) {
	raw := slices.Concat(
		batch(0, 7, attrTransactional, []byte("a0")),
		marker(1, 7, false),
		batch(2, 7, attrTransactional, []byte("c2")),
		marker(3, 7, true))
	aborted := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 0}}
	got, next := walkAll(t, raw, 0, aborted, true)
	want := []visited{{"", 0, true}, {"", 1, true}, {"c2", 2, false}, {"", 3, true}}
	if !slices.Equal(got, want) || next != 4 {
		t.Errorf("visited %v, next %d; want %v, next 4", got, next, want)
	}
}

// A partial batch at the end of a response (the broker cut it at its size
// limit) is left for the next fetch; a damaged one is an error.
func TestWalkPartialAndDamagedBatches(t *testing.T) {
	whole := batch(0, -1, 0, []byte("v0"))
	second := batch(1, -1, 0, []byte("v1"))
	raw := slices.Concat(whole, second[:len(second)-3])
	got, next := walkAll(t, raw, 0, nil, true)
	if want := []visited{{"v0", 0, false}}; !slices.Equal(got, want) || next != 1 {
		t.Errorf("visited %v, next %d; want %v, next 1", got, next, want)
	}

	damaged := slices.Clone(whole)
	damaged[len(damaged)-1] ^= 0xff
	var w batchWalker
	_, _, err := w.walk(damaged, 0, nil, true, func([]byte, int64, bool) bool { return true })
	if err == nil {
		t.Fatal("a batch whose CRC does not match was read")
	}

	old := slices.Clone(whole)
	old[magicAt] = 1
	if _, _, err := w.walk(old, 0, nil, true, func([]byte, int64, bool) bool { return true }); err != errOldFormat {
		t.Fatalf("a magic 1 message set: error %v, want errOldFormat", err)
	}
}

// A batch whose records compaction removed reads as a gap: the next fetch
// starts past it.
func TestWalkEmptyBatch(t *testing.T) {
	empty := batch(0, -1, 0)
	b := kmsg.RecordBatch{}
	if err := b.ReadFrom(empty); err != nil {
		t.Fatal(err)
	}
	// offsets 0-4 once held records
	binary.BigEndian.PutUint32(empty[23:27], 4)
	binary.BigEndian.PutUint32(empty[17:21], crc32.Checksum(empty[batchCRCFrom:], castagnoli))
	got, next := walkAll(t, empty, 0, nil, true)
	if want := []visited{{"", 4, true}}; !slices.Equal(got, want) || next != 5 {
		t.Errorf("visited %v, next %d; want %v, next 5", got, next, want)
	}
}

// FuzzWalk: whatever the bytes, walk never panics, visits offsets in
// increasing order at or past from, and never returns an offset before
// from or before the last offset visited.
func FuzzWalk(f *testing.F) {
	f.Add(slices.Concat(batch(0, 7, attrTransactional, []byte("a")), marker(1, 7, false), batch(2, -1, 0, []byte("b"), []byte("c"))), int64(0), true)
	f.Add(batch(10, -1, 0, []byte("x"), nil, []byte("")), int64(11), false)
	f.Fuzz(func(t *testing.T, raw []byte, from int64, committed bool) {
		if from < 0 {
			from = -from
		}
		var w batchWalker
		last := int64(-1)
		aborted := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 0}}
		next, _, _ := w.walk(raw, from, aborted, committed, func(v []byte, at int64, skip bool) bool {
			if at < from || at <= last {
				panic(fmt.Sprintf("visited offset %d after %d, from %d", at, last, from))
			}
			if skip && v != nil {
				panic("a skip with a value")
			}
			last = at
			return true
		})
		if next < from || next <= last {
			t.Fatalf("next %d, from %d, last visited %d", next, from, last)
		}
	})
}

// Two producers' transactions interleave and abort in the other order
// than they began: the broker lists the aborted transactions as their
// markers were written, (B, 11) before (A, 10). Neither is exported.
func TestWalkAbortedTransactionsListedOutOfOrder(t *testing.T) {
	raw := slices.Concat(
		batch(10, 1, attrTransactional, []byte("a10")),
		batch(11, 2, attrTransactional, []byte("b11")),
		marker(12, 2, false),
		marker(13, 1, false),
		batch(14, -1, 0, []byte("p14")))
	aborted := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 2, FirstOffset: 11}, {ProducerID: 1, FirstOffset: 10}}
	got, next := walkAll(t, raw, 10, aborted, true)
	want := []visited{{"", 10, true}, {"", 11, true}, {"", 12, true}, {"", 13, true}, {"p14", 14, false}}
	if !slices.Equal(got, want) || next != 15 {
		t.Errorf("visited %v, next %d; want %v, next 15", got, next, want)
	}
}

// Compaction removed a batch's last records (offsets 1 to 4 of 0 to 4):
// they are reported as a gap, so that the partition is read to its end,
// whether the fetch starts at the batch or past its last record.
func TestWalkCompactedTail(t *testing.T) {
	b := batch(0, -1, 0, []byte("v0"))
	binary.BigEndian.PutUint32(b[23:27], 4) // the last offset delta
	binary.BigEndian.PutUint32(b[17:21], crc32.Checksum(b[batchCRCFrom:], castagnoli))
	got, next := walkAll(t, b, 0, nil, true)
	if want := []visited{{"v0", 0, false}, {"", 4, true}}; !slices.Equal(got, want) || next != 5 {
		t.Errorf("from 0: visited %v, next %d; want %v, next 5", got, next, want)
	}
	got, next = walkAll(t, b, 1, nil, true)
	if want := []visited{{"", 4, true}}; !slices.Equal(got, want) || next != 5 {
		t.Errorf("from 1: visited %v, next %d; want %v, next 5", got, next, want)
	}
}

// A message of the format before Kafka 0.11 shorter than a record batch's
// header is an error, not a partial batch to fetch again for ever.
func TestWalkShortOldMessage(t *testing.T) {
	m := make([]byte, 12+26)
	binary.BigEndian.PutUint64(m, 5)
	binary.BigEndian.PutUint32(m[8:], 26)
	m[magicAt] = 1
	var w batchWalker
	if _, _, err := w.walk(m, 5, nil, true, func([]byte, int64, bool) bool { return true }); err != errOldFormat {
		t.Fatalf("error %v, want errOldFormat", err)
	}
}
