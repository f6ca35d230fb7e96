// Package cdc holds the change-data-capture record model and the decoders
// that turn raw bytes into it. It performs no I/O.
package cdc

import (
	"time"
	"unicode/utf8"
)

// Class says what a decoded record is for.
type Class uint8

const (
	ClassDML            Class = iota + 1 // a row change
	ClassObjectMetadata                  // a table definition (OBJECT_METADATA)
	ClassDDL                             // a DDL statement
	ClassStreamMetadata                  // producer and source context (STREAM_METADATA)
	ClassSchema                          // an in-band JSON Schema record
)

func (c Class) String() string {
	switch c {
	case ClassDML:
		return "dml"
	case ClassObjectMetadata:
		return "object_metadata"
	case ClassDDL:
		return "ddl"
	case ClassStreamMetadata:
		return "stream_metadata"
	case ClassSchema:
		return "schema"
	}
	return "unknown"
}

// Op is the canonical operation of a DML record, whatever string the source
// used for it.
type Op uint8

const (
	OpInsert Op = iota + 1
	OpUpdate
	OpDelete
	OpUpsert
	OpRefresh // a full-load row (Qlik REFRESH)
)

// String returns the value written to the op_type column.
func (o Op) String() string {
	switch o {
	case OpInsert:
		return "INSERT"
	case OpUpdate:
		return "UPDATE"
	case OpDelete:
		return "DELETE"
	case OpUpsert:
		return "UPSERT"
	case OpRefresh:
		return "REFRESH"
	}
	return "UNKNOWN"
}

// ValueType is the JSON type of a raw value in a row image.
type ValueType uint8

const (
	TypeNull ValueType = iota
	TypeString
	TypeNumber
	TypeBool
	TypeObject
	TypeArray
)

// Field is one column of a row image. Value points into the input buffer of
// the record: it is valid while that buffer is. For strings, Value is the
// still-escaped text between the quotes (see Text).
type Field struct {
	Name  string
	Value []byte
	Type  ValueType
	// Plain says the decoder saw that the string holds no escape and only
	// ASCII bytes: Value is then its text, and valid UTF-8, without a
	// check. False means unknown.
	Plain bool
}

// Image is a before or after row image, in document order.
type Image struct {
	Present bool
	Fields  []Field
}

func (im *Image) reset() {
	im.Present = false
	im.Fields = im.Fields[:0]
}

// Column is one column of an OBJECT_METADATA record.
type Column struct {
	Name     string
	Type     string // JSON primitive classification: string, number, boolean
	Nullable bool
	Key      bool
	// NativeType is the source's own type with its parameters, when the
	// format carries one (Qlik: "NUMERIC(12,2)", "UINT4", "STRING(50)").
	NativeType string
}

// Format names the wire format a record came in.
type Format uint8

const (
	FormatGoldenGate Format = iota // the zero value: GoldenGate Data Streams
	FormatQlik                     // Qlik Replicate
)

func (f Format) String() string {
	if f == FormatQlik {
		return "qlik"
	}
	return "goldengate"
}

// TableMetadata is the definition of a table as the source announced it.
// A decoder gives every metadata record its own Columns slice, so a
// consumer may keep a TableMetadata after the Record is reused.
type TableMetadata struct {
	Table   string
	Columns []Column
	Format  Format
	// SourceVersion is the source's own version of the definition (Qlik's
	// tableVersion), 0 when it has none. A higher one opens a new schema
	// version even when the columns look the same, as a DDL would.
	SourceVersion int64
	// Inferred is set when the exporter derived the columns from data
	// messages instead of a metadata record.
	Inferred bool
}

// Equal reports whether two definitions describe the same columns in the
// same order with the same attributes.
func (m TableMetadata) Equal(o TableMetadata) bool {
	if m.Table != o.Table || m.Format != o.Format || m.SourceVersion != o.SourceVersion || m.Inferred != o.Inferred || len(m.Columns) != len(o.Columns) {
		return false
	}
	for i := range m.Columns {
		if m.Columns[i] != o.Columns[i] {
			return false
		}
	}
	return true
}

// DDL is the object and statement of a DDL record.
type DDL struct {
	Catalog   string
	Schema    string
	Object    string
	Statement string
}

// Record is one decoded CDC record. A decoder fills a caller-owned Record so
// that its slices are reused from record to record.
//
// A DML record points into the data it was decoded from: its field values,
// and its XID, Pos and Qlik ChangeSeq, ChangeMask and ColumnMask strings,
// are valid only while that data is unchanged. Copy (strings.Clone) what must outlive it.
type Record struct {
	Class Class
	Table string // qualified table name (DML, OBJECT_METADATA, DDL)

	Op      Op     // DML only
	OpType  string // the op string exactly as the source sent it
	OpTS    time.Time
	HasOpTS bool
	XID     string
	HasXID  bool
	Pos     string // opaque, byte for byte
	HasPos  bool

	Before Image
	After  Image

	Metadata TableMetadata // OBJECT_METADATA
	DDL      DDL           // DDL

	SchemaID string // JSON Schema record id
	// Body is the record itself without any envelope (the CloudEvents data
	// member, or the whole input). Schema, metadata and DDL consumers keep a
	// copy of it.
	Body []byte

	Format Format
	// Qlik-only fields (zero for GoldenGate).
	Qlik QlikHeaders
}

// QlikHeaders carries the Qlik Replicate header fields that have no
// GoldenGate counterpart.
type QlikHeaders struct {
	ChangeSeq       string
	EventCounter    int64
	HasEventCounter bool
	LastEvent       bool
	HasLastEvent    bool
	ChangeMask      string
	ColumnMask      string
	TableVersion    int64
	HasTableVersion bool
}

// Reset clears r for reuse, keeping the allocated slices of its row
// images. Metadata.Columns is not reused: consumers keep the TableMetadata
// of a metadata record (the schema catalog caches it), and refilling the
// same backing array would silently rewrite what they cached. Metadata
// records are rare, so the allocation does not matter.
func (r *Record) Reset() {
	before, after := r.Before, r.After
	*r = Record{}
	before.reset()
	after.reset()
	r.Before, r.After = before, after
}

// checkText refuses a record whose table name or metacolumn strings are
// not UTF-8. They are written as Parquet
// strings, which must be, and DuckDB refuses a whole file over one bad
// value. Column values are checked by the writer, which knows which
// columns hold text.
func (r *Record) checkText() error {
	for _, t := range [...]struct{ what, s string }{
		{"table name", r.Table}, {"xid", r.XID}, {"pos", r.Pos}, {"changeSequence", r.Qlik.ChangeSeq},
	} {
		if !utf8.ValidString(t.s) {
			return Rejectf(ReasonMalformedJSON, "%s %q is not valid UTF-8", t.what, truncate(t.s, 64))
		}
	}
	return nil // column names: by the catalog, which also sees inferred ones
}

// RowImage returns the image that becomes the row of a data file: before
// for DELETE, after for everything else. A Qlik DELETE may carry the
// deleted row in data (after) only; it is used then.
func (r *Record) RowImage() *Image {
	if r.Op == OpDelete && (r.Format != FormatQlik || r.Before.Present) {
		return &r.Before
	}
	return &r.After
}
