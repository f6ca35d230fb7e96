// Package source hands out raw CDC messages with their position in the
// input: files (JSON Lines, gzip), stdin, and Kafka consumer groups
// (kafka-go; NewDialer builds the TLS and SASL dialer).
package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// Message is one raw record and where it came from.
type Message struct {
	// Value is the record's bytes. It is valid until the next call to
	// Next, unless Owned is set.
	Value []byte
	// Owned says Value's memory is never written again and stays valid
	// after Next (Kafka's values are copied out of the socket's buffers
	// into memory kept for them), so a consumer may keep it instead of
	// copying it.
	Owned bool
	// Partition names the ordered stream the record belongs to (an input
	// file, a Kafka topic partition) as a safe path segment.
	Partition string
	// Offset orders records within a partition: the line the record starts
	// on for files, the Kafka offset for Kafka.
	Offset int64
	// Origin and Sep make, with Offset, the human-readable location
	// Position returns, such as "orders.jsonl:17" or "cdc-0@42". It is
	// only needed for dead letters and logs, so it is not built for every
	// record.
	Origin string
	Sep    byte
	// Oversized is set when the record was longer than the limit; Value
	// then holds only its beginning and Size its full length.
	Oversized bool
	Size      int64
	// Damaged, when set, says why Value is not a record: bytes the
	// source could not frame as one (after the last member of a gzip
	// file), handed out to be dead-lettered with this text instead of
	// decoded.
	Damaged string
	// Lag is how many records of the partition are behind this one
	// (Kafka), or -1 when unknown.
	Lag int64
	// Control, when set, is an ownership event instead of a record.
	Control *Control
	// Skip, when set, says that the offsets up to Offset (from the one
	// after the previous message of the partition) hold nothing to
	// export: Kafka's transaction markers, or the records of an aborted
	// transaction. The consumer counts them as read and nothing else;
	// Value is nil.
	Skip bool
}

// Position is where the message came from, such as "orders.jsonl:17".
func (m *Message) Position() string {
	return m.Origin + string(m.Sep) + strconv.FormatInt(m.Offset, 10)
}

// Source yields messages in order. Next returns io.EOF when the input is
// exhausted (for sources that end).
type Source interface {
	Next(ctx context.Context) (*Message, error)
	Close() error
}

// PartitionName derives a stable, safe partition name from a file path:
// the sanitized base name plus a short hash of the absolute path, so two
// files with one base name in different folders stay apart.
func PartitionName(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	sum := sha256.Sum256([]byte(abs))
	base := filepath.Base(path)
	var b strings.Builder
	for _, r := range base {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String() + "-" + hex.EncodeToString(sum[:4])
}

var errEOF = io.EOF
