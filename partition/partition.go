// Package partition decides where files go: table, schema version and date
// become object keys. It is pure functions.
//
// A table's folder is one path segment made from its qualified name by
// TableSegment, and read back by ParseTableSegment:
//
//   - ASCII letters, digits and _ - . $ # stay as they are;
//   - every other byte (including / \ % = space, control characters and
//     non-ASCII UTF-8 bytes) becomes %XX with upper-case hex;
//   - a leading '.' becomes %2E and a leading '_' becomes %5F.
//
// The mapping is reversible and each table has one spelling, so two names
// never share a folder. '=' is escaped so that no table folder looks like
// a Hive partition. A leading '.' or '_' is escaped because Spark and Hive
// skip such paths as hidden (a table "_AUDIT" was invisible to them),
// because "." and ".." would name directories of their own, and because
// the sink's own folders (_schemas, _checkpoints, _dlq) start with '_'.
//
// Lakes written before the leading '_' was escaped hold tables "_X" in a
// folder "_X": ParseTableSegment refuses it and says to move the folder
// (and _schemas/_X) to "%5FX".
package partition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TableSegment turns a qualified table name into one path segment that is
// safe on every file system and object store, and reversible, by the rules
// of the package comment. The empty name has no segment, and neither has a
// name whose segment would be longer than MaxSegmentBytes: the caller must
// reject them.
func TableSegment(table string) (string, error) {
	if table == "" {
		return "", errors.New("empty table name")
	}
	var b strings.Builder
	b.Grow(len(table))
	for i := 0; i < len(table); i++ {
		c := table[i]
		if safe(c) && !(i == 0 && (c == '.' || c == '_')) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() > MaxSegmentBytes {
		return "", fmt.Errorf("table name %q makes a folder name of %d bytes (each byte that is not an ASCII letter, digit or _ - . $ # takes 3), more than the %d that file systems allow; rename the table at the source",
			truncateName(table), b.Len(), MaxSegmentBytes)
	}
	return b.String(), nil
}

// MaxSegmentBytes is the longest table segment: a file or folder name has
// at most 255 bytes on the common file systems (ext4, XFS, APFS, NTFS's
// 255 UTF-16 units), and a segment is one such name, also in
// _schemas/{segment}/. A longer one failed the upload of every round and
// the recovery of every later run.
const MaxSegmentBytes = 255

// truncateName shortens a table name for an error message.
func truncateName(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:80] + "..."
}

// ParseTableSegment reverses TableSegment. It rejects any segment that
// TableSegment would not produce, so that two spellings never name one
// table.
func ParseTableSegment(seg string) (string, error) {
	if len(seg) > MaxSegmentBytes {
		return "", fmt.Errorf("table segment of %d bytes is longer than %d", len(seg), MaxSegmentBytes)
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c == '%':
			if i+2 >= len(seg) {
				return "", fmt.Errorf("table segment %q: truncated escape", seg)
			}
			v, err := strconv.ParseUint(seg[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("table segment %q: bad escape", seg)
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("table segment %q: empty", seg)
	}
	// Needless escapes, lower-case hex and bytes left unescaped are all
	// spellings that TableSegment does not make.
	if canon, _ := TableSegment(b.String()); canon != seg {
		if seg[0] == '_' && "%5F"+seg[1:] == canon {
			return "", fmt.Errorf("table folder %q was written by an exporter that did not escape a leading '_' (Spark and Hive skip such folders as hidden): move it, and _schemas/%s, to %q", seg, seg, canon)
		}
		return "", fmt.Errorf("table segment %q is not canonical: the table's segment is %q", seg, canon)
	}
	return b.String(), nil
}

func safe(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '$' || c == '#'
}

// FolderKeys are the Hive partition keys of data folders, every one the
// layout can write (hr only when hourly). A reader with Hive partitioning
// gives a column of one of these names (in any case) the folder's value
// instead of the file's.
var FolderKeys = []string{"schema_version", "dt", "hr"}

// Granularity is how finely files are split by time.
type Granularity uint8

const (
	Daily  Granularity = iota + 1 // dt=YYYY-MM-DD
	Hourly                        // dt=YYYY-MM-DD/hr=HH
)

// ParseGranularity parses "day" or "hour".
func ParseGranularity(s string) (Granularity, error) {
	switch s {
	case "day", "daily", "":
		return Daily, nil
	case "hour", "hourly":
		return Hourly, nil
	}
	return 0, fmt.Errorf("unknown partition granularity %q (want day or hour)", s)
}

// TimePartition returns the Hive-style time path of t in UTC.
func (g Granularity) TimePartition(t time.Time) string {
	t = t.UTC()
	var buf [32]byte
	b := append(buf[:0], "dt="...)
	b = t.AppendFormat(b, "2006-01-02")
	if g == Hourly {
		b = append(b, "/hr="...)
		b = t.AppendFormat(b, "15")
	}
	return string(b)
}

// DataDir is the folder of a table version's files for one time partition:
// {table}/schema_version={N}/{time partition}.
func DataDir(tableSeg string, version int, timePart string) string {
	return tableSeg + "/schema_version=" + strconv.Itoa(version) + "/" + timePart
}

// DataFileName names a data file by the source range it starts at and
// the run that wrote it (empty: none). Names sort by first offset. The run
// keeps an instance that lost its partition to another (a stalled Kafka
// consumer, a second run over the same file) from replacing the other's
// files with its own rows for the same range: its files are left over
// beside them, named by an intent that the partition's next owner clears.
func DataFileName(sourcePartition string, firstOffset int64, run string) string {
	return fmt.Sprintf("part-%s-%020d%s.parquet", sourcePartition, firstOffset, runSuffix(run))
}

// SchemaKey is where a version's description goes.
func SchemaKey(tableSeg string, version int) string {
	return "_schemas/" + tableSeg + "/v" + strconv.Itoa(version) + ".json"
}

// DLQKey is where a batch of rejected records goes: by the day it is
// written, the source range it starts at and the run that wrote it
// (empty: none). Names sort by first offset within a day. As in
// DataFileName, the run keeps an instance that lost its partition from
// replacing the new owner's dead letters for the same first offset with
// its own.
func DLQKey(day time.Time, sourcePartition string, firstOffset int64, run string) string {
	return fmt.Sprintf("_dlq/dt=%s/%s-%020d%s.jsonl", day.UTC().Format("2006-01-02"), sourcePartition, firstOffset, runSuffix(run))
}

// runSuffix is how a file name ends with the run that wrote it.
func runSuffix(run string) string {
	if run == "" {
		return ""
	}
	return "-" + run
}
