package source

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/segmentio/kafka-go/compress"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchWalker reads the record batches of one partition of a fetch
// response (Kafka's record batch format, magic 2): kmsg, franz-go's
// protocol package, reads each batch's header and its records, and
// kafka-go's codecs decompress them. What is not a change to export is
// left out, its offsets reported as a gap so that they count as read:
// control batches (the commit and abort markers of transactions) always,
// and, reading committed, the batches of aborted transactions, which the
// broker sends along with the list of those transactions for the client
// to filter.
type batchWalker struct {
	// inflated holds a compressed batch's records, reused.
	inflated []byte
	// aborted is the response's aborted transactions in first offset
	// order, reused.
	aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction
	batch   kmsg.RecordBatch
	rec     kmsg.Record
	// aborting holds the producers whose aborted transaction the walk
	// is inside: from the transaction's first offset to its abort marker.
	aborting map[int64]bool
}

// batchHeaderBytes is the length of a record batch's header up to and
// including its record count; batchCRCFrom is where what its CRC covers
// starts (the attributes).
const (
	batchHeaderBytes = 61
	batchCRCFrom     = 21
	batchLengthEnd   = 12 // base offset and length
	magicAt          = 16

	attrCompression   = 0x07
	attrTransactional = 0x10
	attrControl       = 0x20

	controlAbort = 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errOldFormat reports record batches older than Kafka 0.11's format.
var errOldFormat = errors.New("the partition holds messages in the format of Kafka before 0.11 (magic 0 or 1), which the exporter does not read; copy the topic with a current client first")

// walk reads the batches of raw in order and calls visit for every
// record at or past from (value and offset; the value is valid until the
// next walk) and, with skip set and a nil value, for the last offset of
// each batch that holds nothing to export. A visit that returns false
// stops the walk. It returns the offset to fetch next: past the last
// batch read whole, or past the last record visited when stopped; from
// when raw holds no whole batch.
//
// aborted is the response's list of aborted transactions (producer and
// first offset); committed says whether to leave their batches out
// (reading committed). The broker lists them in the order their abort
// markers were written, not by first offset: walked in that order, a
// transaction that began before another but was aborted after it would
// be read as committed. They are taken in first offset order, as Kafka's
// own consumer does.
func (w *batchWalker) walk(raw []byte, from int64, aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction, committed bool,
	visit func(value []byte, offset int64, skip bool) bool) (next int64, stopped bool, err error) {
	next = from
	if committed && len(aborted) > 0 {
		if w.aborting == nil {
			w.aborting = map[int64]bool{}
		}
		w.aborted = append(w.aborted[:0], aborted...)
		slices.SortStableFunc(w.aborted, func(a, b kmsg.FetchResponseTopicPartitionAbortedTransaction) int {
			return cmp.Compare(a.FirstOffset, b.FirstOffset)
		})
		aborted = w.aborted
	}
	clear(w.aborting) // the list is the response's: nothing carries over
	for len(raw) >= batchLengthEnd {
		if len(raw) > magicAt && raw[magicAt] != 2 {
			return next, false, errOldFormat
		}
		length := int64(int32(binary.BigEndian.Uint32(raw[8:batchLengthEnd])))
		end := batchLengthEnd + length
		if length < batchHeaderBytes-batchLengthEnd {
			return next, false, fmt.Errorf("record batch at offset %d: %d bytes long, shorter than its header", int64(binary.BigEndian.Uint64(raw)), length)
		}
		if end > int64(len(raw)) {
			// The broker cuts the response at its size limit, so the last
			// batch may be partial: fetched again next time.
			break
		}
		one := raw[:end]
		raw = raw[end:]
		if err := w.batch.UnsafeReadFrom(one); err != nil {
			return next, false, fmt.Errorf("record batch at offset %d: %w", int64(binary.BigEndian.Uint64(one)), err)
		}
		b := &w.batch
		if crc32.Checksum(one[batchCRCFrom:], castagnoli) != uint32(b.CRC) {
			return next, false, fmt.Errorf("record batch at offset %d: CRC mismatch (damaged in transit or on the broker)", b.FirstOffset)
		}
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		for committed && len(aborted) > 0 && aborted[0].FirstOffset <= last {
			w.aborting[aborted[0].ProducerID] = true
			aborted = aborted[1:]
		}
		control := b.Attributes&attrControl != 0
		if control && w.aborting[b.ProducerID] {
			if kind, ok := w.controlKind(b); ok && kind == controlAbort {
				delete(w.aborting, b.ProducerID)
			}
		}
		if last < next {
			// before from, or offsets a batch already read holds: a
			// broker never sends those, and a record handed out twice
			// would be exported twice
			continue
		}
		abortedTxn := committed && b.Attributes&attrTransactional != 0 && w.aborting[b.ProducerID]
		if !control && !abortedTxn {
			recs, err := w.records(b)
			if err != nil {
				return next, false, err
			}
			for range b.NumRecords {
				if recs, err = w.nextRecord(b, recs); err != nil {
					return next, false, err
				}
				at := b.FirstOffset + int64(w.rec.OffsetDelta)
				if at < next {
					continue
				}
				if !visit(w.rec.Value, at, false) {
					return at + 1, true, nil
				}
				next = at + 1
			}
		}
		if next <= last {
			// Offsets without a record to export: a marker, an aborted
			// transaction's records, or records compaction removed. They
			// are read too, or the partition's checkpoint would stay short
			// of its end.
			if !visit(nil, last, true) {
				return next, true, nil
			}
			next = last + 1
		}
	}
	return next, false, nil
}

// records returns the records of b, decompressed.
func (w *batchWalker) records(b *kmsg.RecordBatch) ([]byte, error) {
	codec := compress.Compression(b.Attributes & attrCompression)
	if codec == compress.None {
		return b.Records, nil
	}
	c := codec.Codec()
	if c == nil {
		return nil, fmt.Errorf("record batch at offset %d: unknown compression codec %d", b.FirstOffset, codec)
	}
	r := c.NewReader(bytes.NewReader(b.Records))
	defer r.Close()
	buf := bytes.NewBuffer(w.inflated[:0])
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("record batch at offset %d: decompress (%s): %w", b.FirstOffset, c.Name(), err)
	}
	w.inflated = buf.Bytes()
	return w.inflated, nil
}

// controlKind returns the type of a control batch's marker: 0 abort, 1
// commit.
func (w *batchWalker) controlKind(b *kmsg.RecordBatch) (int16, bool) {
	if b.NumRecords < 1 {
		return 0, false
	}
	recs, err := w.records(b)
	if err != nil {
		return 0, false
	}
	if _, err := w.nextRecord(b, recs); err != nil || len(w.rec.Key) < 4 {
		return 0, false
	}
	return int16(binary.BigEndian.Uint16(w.rec.Key[2:4])), true
}

// nextRecord reads the record recs begins with into w.rec and returns
// the records after it.
func (w *batchWalker) nextRecord(b *kmsg.RecordBatch, recs []byte) ([]byte, error) {
	n, size := binary.Varint(recs)
	if size <= 0 || n < 0 || n > int64(len(recs)-size) {
		return nil, fmt.Errorf("record batch at offset %d: a record's length runs past the batch", b.FirstOffset)
	}
	if err := w.rec.UnsafeReadFrom(recs[:size+int(n)]); err != nil {
		return nil, fmt.Errorf("record batch at offset %d: %w", b.FirstOffset, err)
	}
	return recs[size+int(n):], nil
}
