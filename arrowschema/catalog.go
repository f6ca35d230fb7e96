package arrowschema

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
)

// Names of the columns the exporter adds to every data file.
const (
	ColOpType        = "op_type"
	ColOpTS          = "op_ts"
	ColXID           = "xid"
	ColPos           = "pos"
	ColAbsentColumns = "absent_columns" // columns missing from a partial row image
	ColBeforeImage   = "before_image"   // the before image as a struct
	ColSrcPartition  = "src_partition"  // the source partition (Kafka topic-partition, input file)
	ColSrcOffset     = "src_offset"     // the record's offset in it: stream order within the partition

	// Qlik Replicate tables also get these.
	ColChangeSeq       = "change_seq"        // headers.changeSequence
	ColTxnEventCounter = "txn_event_counter" // headers.transactionEventCounter
	ColTxnLastEvent    = "txn_last_event"    // headers.transactionLastEvent
	ColChangedColumns  = "changed_columns"   // headers.changeMask as column names
)

// Options control how schemas are built.
type Options struct {
	// Hints force a column's type. Keys are "TABLE:COLUMN"; TABLE may be
	// "*" for every table. They win over everything else.
	Hints map[string]Type
	// BeforeImage adds the before image as a struct column.
	BeforeImage bool
	// SchemaFields are the GoldenGate field names JSON Schema records
	// describe: the row images and qual_table, when configured to other
	// names than the defaults.
	SchemaFields SchemaFields
}

// ParseHints parses "TABLE:COLUMN" → type-string hints, reporting every
// bad entry at once.
func ParseHints(raw map[string]string) (map[string]Type, error) {
	out := make(map[string]Type, len(raw))
	var problems []string
	for k, v := range raw {
		i := strings.LastIndexByte(k, ':')
		if i <= 0 || i == len(k)-1 {
			problems = append(problems, fmt.Sprintf("type hint key %q: want TABLE:COLUMN (TABLE may be *)", k))
			continue
		}
		t, err := ParseType(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("type hint %q: %v", k, err))
			continue
		}
		out[k] = t
	}
	if len(problems) > 0 {
		sort.Strings(problems) // a stable message, whatever the map order
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

// Column is one table column of a schema version.
type Column struct {
	Name       string
	Type       Type
	Nullable   bool   // as the source declares it
	Key        bool   // part of the key known to the source
	SourceType string // the metadata's primitive (string, number, boolean)
	TypeFrom   string // hint, json-schema, ddl or default
	// Range bounds the values of a column whose source type holds fewer
	// than its lake type (see SourceRange); zero for the others.
	Range SourceRange
}

// Version is one schema version of a table. Its schema never changes once
// handed out (a new Version value replaces it); only the completion of a
// provisional version with the same schema clears Provisional and Hold.
type Version struct {
	Table       string
	Number      int
	Columns     []Column
	Schema      *arrow.Schema // the data-file schema, metacolumns included
	Metadata    cdc.TableMetadata
	DDL         string    // the statement that opened this version, if any
	OpenedAtPos string    // source pos of the record that opened it
	OpenedAtTS  time.Time // op_ts of that record, if it had one
	// Provisional is true while the version was derived from a DDL
	// statement and the refreshed metadata has not arrived yet.
	Provisional bool
	// Hold is true when DML for this version must wait for the refreshed
	// metadata because the DDL that opened it was not understood.
	Hold bool
	// written is set once DML has been written under a provisional
	// version (MarkWritten).
	written bool

	index map[string]int
	// fieldNames are the columns' names in data files: their own, but
	// for a name that readers would take for a partition folder's key.
	fieldNames []string
}

// FieldName is the name Columns[i] has in data files: the column's own
// name, unless it is a folder key of the layout (schema_version, dt, hr,
// in any case), which readers with Hive partitioning would fill with the
// folder's value instead of the file's. Such a column is written with an
// underscore appended ("DT" as "DT_"), whatever the other columns are, so
// that it keeps its name across versions. Metadata with a column of that
// name too is refused, unless restored from an older checkpoint, where
// the column keeps its own name.
func (v *Version) FieldName(i int) string {
	if v.fieldNames == nil { // a Version not made by a Catalog
		return v.Columns[i].Name
	}
	return v.fieldNames[i]
}

// fieldNames works out Version.FieldName for every column of cols. When
// the written name is one that another column (or a metacolumn in taken)
// already has, the column keeps its own name, shadowed as it is, and
// clash names it: build refuses such metadata, except when it rebuilds a
// version from a checkpoint written before columns were renamed.
func fieldNames(cols []Column, taken map[string]bool) (names []string, clash string) {
	names = make([]string, len(cols))
	own := map[string]bool{}
	for _, c := range cols {
		own[strings.ToLower(c.Name)] = true
	}
	for i, c := range cols {
		names[i] = c.Name
		if !slices.Contains(partition.FolderKeys, strings.ToLower(c.Name)) {
			continue
		}
		if low := strings.ToLower(c.Name + "_"); !own[low] && !taken[low] {
			names[i] = c.Name + "_"
		} else if clash == "" {
			clash = c.Name
		}
	}
	return names, clash
}

// sameNameButCase returns the first two columns whose names are equal
// but for case, if any.
func sameNameButCase(cols []Column) (a, b string) {
	seen := make(map[string]string, len(cols))
	for _, c := range cols {
		low := strings.ToLower(c.Name)
		if first, ok := seen[low]; ok {
			return first, c.Name
		}
		seen[low] = c.Name
	}
	return "", ""
}

// MarkWritten records that DML came for v's table while v was in force,
// so may be written under it. When refreshed metadata then gives a
// provisional v other columns or types, it opens the next version instead
// of replacing v under the same number: v's files keep the schema they
// were written with, and every file of a version must match its _schemas
// document.
func (v *Version) MarkWritten() { v.written = true }

// Written reports whether MarkWritten was called for v (or for the
// version it replaced under the same number).
func (v *Version) Written() bool { return v.written }

// ColumnIndex returns the position of a table column in Columns.
func (v *Version) ColumnIndex(name string) (int, bool) {
	i, ok := v.index[name]
	return i, ok
}

// EventKind says what a catalog change means for open files.
type EventKind uint8

const (
	// EventOpened: a new version number was opened; files of the previous
	// version must be closed.
	EventOpened EventKind = iota + 1
	// EventReplaced: the refreshed metadata completed a provisional version
	// with a different schema before any DML was written under it, or a
	// schema record changed only where a version's types come from; the
	// version number stays, open files of the replaced schema must be
	// closed.
	EventReplaced
	// EventCompleted: the refreshed metadata confirmed a provisional
	// version; nothing to close, but the description should be rewritten.
	EventCompleted
)

// Event reports a schema change to the caller.
type Event struct {
	Kind     EventKind
	Version  *Version
	Previous *Version // nil for a table's first version
}

// Catalog keeps the schema versions of every table. It is not safe for
// concurrent use.
type Catalog struct {
	opts    Options
	schemas map[string]*JSONSchemaInfo // by id, in-band JSON Schema records
	order   []string                   // schema ids, newest last
	tables  map[string]*tableState
	// restoring is set while RestoreCatalog rebuilds versions that an
	// earlier build accepted.
	restoring bool
}

type tableState struct {
	current  *Version
	ddlTypes map[string]string // column → SQL type from DDL statements
	// openingDDL is a DDL seen before the table's first metadata.
	openingDDL string
}

// NewCatalog returns an empty catalog.
func NewCatalog(opts Options) *Catalog {
	return &Catalog{opts: opts, schemas: map[string]*JSONSchemaInfo{}, tables: map[string]*tableState{}}
}

// Current returns the version in force for table, or nil.
func (c *Catalog) Current(table string) *Version {
	if st := c.tables[table]; st != nil {
		return st.current
	}
	return nil
}

// DDLWithoutMetadata lists, sorted, the tables that have had a DDL record
// but no metadata: such a statement opens no version, it only refines the
// metadata to come, so for a table whose metadata never comes it changed
// nothing. The caller warns of them once, at the end of a run.
func (c *Catalog) DDLWithoutMetadata() []string {
	var out []string
	for name, st := range c.tables {
		if st.current == nil && st.openingDDL != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Tables returns the number of tables with a version.
func (c *Catalog) Tables() int { return len(c.tables) }

// ApplySchemaRecord caches a JSON Schema record by id. Records sent again
// replace the earlier one. A table whose version in force the cached
// records now type differently opens the next version at once (the events
// returned), as its next metadata would: a version is always what its
// metadata and the cached records build, which is how RestoreCatalog
// rebuilds it from a checkpoint. Data Streams sends a table's schema
// record before the first DML that needs it, which may be after the
// table's metadata; that version then has no files.
//
// The next version opens whether or not DML came under the one in force:
// replacing a version with no DML under its number would depend on what
// a rerun cannot see (DML held, then skipped as durable), and on output
// written before this rule. A provisional version (after a DDL) waits for
// its refreshed metadata.
func (c *Catalog) ApplySchemaRecord(id string, doc []byte) ([]*Event, error) {
	info, err := c.opts.SchemaFields.Parse(id, doc)
	if err != nil {
		return nil, err
	}
	old, seen := c.schemas[id]
	if seen {
		for i, o := range c.order {
			if o == id {
				c.order = append(c.order[:i], c.order[i+1:]...)
				break
			}
		}
	}
	c.schemas[id] = info
	c.order = append(c.order, id)
	if c.restoring {
		return nil, nil
	}
	var events []*Event
	for _, table := range c.tablesMatching(info, old) {
		if ev := c.retype(table); ev != nil {
			events = append(events, ev)
		}
	}
	return events, nil
}

// tablesMatching lists, sorted, the tables with a version that a schema
// record matches, the new one or the one it replaced (old, maybe nil).
func (c *Catalog) tablesMatching(info, old *JSONSchemaInfo) []string {
	var tables []string
	for table, st := range c.tables {
		if st.current != nil && (info.MatchesTable(table) || old != nil && old.MatchesTable(table)) {
			tables = append(tables, table)
		}
	}
	sort.Strings(tables)
	return tables
}

// retype rebuilds table's version in force from its metadata and the
// cached schema records, and opens the next version when that changes it.
func (c *Catalog) retype(table string) *Event {
	st := c.tables[table]
	cur := st.current
	if cur.Provisional {
		return nil
	}
	next, err := c.build(cur.Metadata, st)
	if err != nil {
		// The metadata built once; what a record changes is types and
		// nullability, which do not make it fail.
		return nil
	}
	if sameColumns(cur.Columns, next.Columns) {
		if sameOrigins(cur.Columns, next.Columns) {
			return nil
		}
		// Only where the types come from changed (type_from in the files'
		// field metadata and the _schemas document): the same version,
		// described as a restore would build it.
		next.Number, next.DDL, next.OpenedAtPos, next.OpenedAtTS = cur.Number, cur.DDL, cur.OpenedAtPos, cur.OpenedAtTS
		st.current = next
		return &Event{Kind: EventReplaced, Version: next, Previous: cur}
	}
	next.Number = cur.Number + 1
	st.current = next
	return &Event{Kind: EventOpened, Version: next, Previous: cur}
}

// sameOrigins reports whether columns that sameColumns matched got their
// types from the same place.
func sameOrigins(a, b []Column) bool {
	for i := range a {
		if a[i].TypeFrom != b[i].TypeFrom {
			return false
		}
	}
	return true
}

// ApplyMetadata takes an OBJECT_METADATA record. It returns an event when
// the table's version changes, nil when the metadata repeats the cached one.
func (c *Catalog) ApplyMetadata(md cdc.TableMetadata, pos string, ts time.Time) (*Event, error) {
	// The caller's Record reuses its Columns slice for the next record it
	// decodes; a version keeps the metadata for as long as it lives.
	md.Columns = append([]cdc.Column(nil), md.Columns...)
	pos = strings.Clone(pos) // a DML record's Pos (inferred Qlik columns) shares reused memory
	st := c.tables[md.Table]
	if st == nil {
		st = &tableState{ddlTypes: map[string]string{}}
	}
	next, err := c.build(md, st)
	if err != nil {
		return nil, err
	}
	cur := st.current
	c.tables[md.Table] = st
	switch {
	case cur == nil:
		next.Number, next.DDL, next.OpenedAtPos, next.OpenedAtTS = 1, st.openingDDL, pos, ts
		st.current = next
		return &Event{Kind: EventOpened, Version: next}, nil
	case cur.Provisional:
		// The refresh that follows a DDL completes the version it opened.
		if sameColumns(cur.Columns, next.Columns) {
			// Same schema: keep the Version value so open buffers stay open.
			cur.Provisional, cur.Hold, cur.Metadata = false, false, md
			return &Event{Kind: EventCompleted, Version: cur}, nil
		}
		if cur.written && !sameTypes(cur.Columns, next.Columns) {
			// Files were written with other columns or types than the
			// refresh says: under the same number they would not match its
			// _schemas document. Order, nullability and keys differ
			// harmlessly.
			next.Number, next.OpenedAtPos, next.OpenedAtTS = cur.Number+1, pos, ts
			st.current = next
			return &Event{Kind: EventOpened, Version: next, Previous: cur}, nil
		}
		next.Number, next.DDL, next.OpenedAtPos, next.OpenedAtTS = cur.Number, cur.DDL, cur.OpenedAtPos, cur.OpenedAtTS
		st.current = next
		return &Event{Kind: EventReplaced, Version: next, Previous: cur}, nil
	case sameColumns(cur.Columns, next.Columns) && cur.Metadata.Equal(md):
		return nil, nil
	default:
		next.Number, next.OpenedAtPos, next.OpenedAtTS = cur.Number+1, pos, ts
		st.current = next
		return &Event{Kind: EventOpened, Version: next, Previous: cur}, nil
	}
}

// ApplyDDL takes a DDL record for a table. A DDL for a table with a version
// opens the next version: its columns are the cached ones with the
// statement applied when it is understood; otherwise the version holds
// DML until the refreshed metadata arrives.
func (c *Catalog) ApplyDDL(table, statement, pos string, ts time.Time) (*Event, error) {
	parsed := ParseDDL(statement)
	pos = strings.Clone(pos)
	st := c.tables[table]
	if st == nil {
		st = &tableState{ddlTypes: map[string]string{}}
		c.tables[table] = st
	}
	for _, col := range parsed.Create {
		st.ddlTypes[col.Name] = col.SQLType
	}
	cur := st.current
	if cur == nil {
		// No columns to change yet, but the types the statement declares
		// refine the metadata that will follow.
		recordAlterTypes(st.ddlTypes, parsed.Alters)
		st.openingDDL = statement
		return nil, nil
	}
	if pos != "" && cur.OpenedAtPos == pos && cur.DDL == statement {
		// The record that opened the version in force, read again: a
		// replay from a checkpoint older than the version (one rebuilt
		// from the lake, whose catalog is the newest version). It is
		// that version, not another.
		return nil, nil
	}
	md := cdc.TableMetadata{Table: table, Columns: append([]cdc.Column(nil), cur.Metadata.Columns...)}
	// A version that waits for its metadata has columns that may be stale,
	// so a later statement applied to them must wait as well.
	hold := !parsed.Understood || (cur.Provisional && cur.Hold)
	switch {
	case parsed.Understood && len(parsed.Create) > 0:
		// CREATE TABLE (the table was dropped and created again) defines
		// every column; the cached ones no longer matter.
		md.Columns = md.Columns[:0]
		for _, col := range parsed.Create {
			_, prim, _ := SQLTypeOf(col.SQLType)
			nullable := col.Nullable == nil || *col.Nullable
			md.Columns = append(md.Columns, cdc.Column{Name: col.Name, Type: prim, Nullable: nullable})
		}
		hold = false
	case parsed.Understood && !hold:
		types := make(map[string]string, len(st.ddlTypes))
		for k, v := range st.ddlTypes {
			types[k] = v
		}
		cols, ok := applyAlters(append([]cdc.Column(nil), md.Columns...), parsed.Alters, types)
		if ok {
			md.Columns, st.ddlTypes = cols, types
		} else {
			hold = true
			recordAlterTypes(st.ddlTypes, parsed.Alters)
		}
	case parsed.Understood:
		// Held: the columns wait for the metadata, the types it declares
		// still refine it.
		recordAlterTypes(st.ddlTypes, parsed.Alters)
	}
	next, err := c.build(md, st)
	if err != nil {
		return nil, err
	}
	next.Number, next.DDL, next.OpenedAtPos, next.OpenedAtTS = cur.Number+1, statement, pos, ts
	next.Provisional, next.Hold = true, hold
	st.current = next
	return &Event{Kind: EventOpened, Version: next, Previous: cur}, nil
}

// recordAlterTypes keeps the SQL types an ALTER TABLE declares for a table
// that has no metadata yet.
func recordAlterTypes(ddlTypes map[string]string, alters []Alteration) {
	for _, a := range alters {
		switch a.Kind {
		case AlterAdd, AlterModify:
			if a.Column.SQLType != "" {
				ddlTypes[a.Column.Name] = a.Column.SQLType
			}
		case AlterDrop:
			delete(ddlTypes, a.Column.Name)
		case AlterRename:
			if t, ok := ddlTypes[a.Column.Name]; ok {
				ddlTypes[a.NewName] = t
				delete(ddlTypes, a.Column.Name)
			}
		}
	}
}

// applyAlters applies alters to cols (which it may modify) and records the
// declared SQL types in ddlTypes. ok is false when a statement does not fit
// the columns (adding one that exists, changing one that does not).
func applyAlters(cols []cdc.Column, alters []Alteration, ddlTypes map[string]string) ([]cdc.Column, bool) {
	find := func(name string) int {
		for i, c := range cols {
			if c.Name == name {
				return i
			}
		}
		for i, c := range cols {
			if strings.EqualFold(c.Name, name) {
				return i
			}
		}
		return -1
	}
	for _, a := range alters {
		i := find(a.Column.Name)
		switch a.Kind {
		case AlterAdd:
			if i >= 0 {
				return nil, false
			}
			_, prim, _ := SQLTypeOf(a.Column.SQLType)
			nullable := a.Column.Nullable == nil || *a.Column.Nullable
			cols = append(cols, cdc.Column{Name: a.Column.Name, Type: prim, Nullable: nullable})
			ddlTypes[a.Column.Name] = a.Column.SQLType
		case AlterDrop:
			if i < 0 {
				return nil, false
			}
			cols = append(cols[:i:i], cols[i+1:]...)
			delete(ddlTypes, a.Column.Name)
		case AlterRename:
			if i < 0 {
				return nil, false
			}
			old := cols[i].Name
			cols[i].Name = a.NewName
			if t, ok := ddlTypes[old]; ok {
				ddlTypes[a.NewName] = t
				delete(ddlTypes, old)
			}
		case AlterModify:
			if i < 0 {
				return nil, false
			}
			if a.Column.SQLType != "" {
				_, prim, _ := SQLTypeOf(a.Column.SQLType)
				cols[i].Type = prim
				ddlTypes[cols[i].Name] = a.Column.SQLType
			}
			if a.Column.Nullable != nil {
				cols[i].Nullable = *a.Column.Nullable
			}
		}
	}
	return cols, true
}

// reservedNames are the metacolumns' names in the data files of a table
// of the format.
func (c *Catalog) reservedNames(format cdc.Format) map[string]bool {
	reserved := map[string]bool{ColOpType: true, ColOpTS: true, ColXID: true, ColPos: true, ColAbsentColumns: true,
		ColSrcPartition: true, ColSrcOffset: true}
	if c.opts.BeforeImage {
		reserved[ColBeforeImage] = true
	}
	if format == cdc.FormatQlik {
		for _, n := range []string{ColChangeSeq, ColTxnEventCounter, ColTxnLastEvent, ColChangedColumns} {
			reserved[n] = true
		}
	}
	return reserved
}

// build turns metadata into a Version (number and provenance left for the
// caller), refining each column's type by precedence: config hint, the
// source's own column type (Qlik), the table's JSON Schema record, the
// type from DDL, then the primitive.
func (c *Catalog) build(md cdc.TableMetadata, st *tableState) (*Version, error) {
	js := c.jsonSchemaFor(md.Table)
	v := &Version{Table: md.Table, Metadata: md, index: make(map[string]int, len(md.Columns))}
	reserved := c.reservedNames(md.Format)
	for i, mc := range md.Columns {
		if mc.Name == "" && !c.restoring {
			// A nameless field (in the row and in the before image) makes
			// a file DuckDB refuses to read.
			return nil, cdc.Rejectf(cdc.ReasonBadMetadata, "column %d of %s has an empty name, which Parquet readers refuse; name it at the source", i+1, md.Table)
		}
		if !utf8.ValidString(mc.Name) && !c.restoring {
			// Parquet names are UTF-8 strings; an inferred column's name
			// comes from the data itself.
			return nil, cdc.Rejectf(cdc.ReasonBadMetadata, "column name %q of %s is not valid UTF-8", mc.Name, md.Table)
		}
		if reserved[strings.ToLower(mc.Name)] {
			return nil, cdc.Rejectf(cdc.ReasonBadMetadata, "table %s has a column %q, which collides with the exporter's metacolumn of that name; rename the column at the source or turn the metacolumn off", md.Table, mc.Name)
		}
		col := Column{Name: mc.Name, Nullable: mc.Nullable, Key: mc.Key, SourceType: mc.Type}
		switch {
		case c.hint(md.Table, mc.Name) != nil:
			col.Type, col.TypeFrom = *c.hint(md.Table, mc.Name), "hint"
			// Qlik's JSON writes binary values in hexadecimal, whatever
			// the column's type: read as base64, a hex string whose
			// length is a multiple of 4 would become other bytes.
			col.Range.Hex = md.Format == cdc.FormatQlik && col.Type.Kind == KindBinary
		case mc.NativeType != "":
			t, r, err := QlikTypeOf(mc.NativeType)
			if err != nil {
				return nil, cdc.Rejectf(cdc.ReasonBadMetadata, "column %q of %s: %v", mc.Name, md.Table, err)
			}
			col.Type, col.TypeFrom, col.Range = keepTimestamp(st, mc.Name, mc.NativeType, t), "source", r
		case js != nil && js.Columns[mc.Name].Type != nil && !js.Columns[mc.Name].Bare:
			col.Type, col.TypeFrom = *js.Columns[mc.Name].Type, "json-schema"
		default:
			if sqlType, ok := st.ddlTypes[mc.Name]; ok {
				// A statement's type refines the metadata's primitive; one
				// of another primitive is older than the metadata (a
				// change the parser did not understand, or none at all).
				if t, prim, ok := SQLTypeOf(sqlType); ok && (mc.Type == "" || prim == mc.Type) {
					col.Type, col.TypeFrom = keepTimestamp(st, mc.Name, sqlType, t), "ddl"
					break
				}
			}
			if js != nil && js.Columns[mc.Name].Type != nil {
				col.Type, col.TypeFrom = *js.Columns[mc.Name].Type, "json-schema"
				break
			}
			col.Type, col.TypeFrom = defaultType(mc.Type), "default"
		}
		if js != nil && js.Columns[mc.Name].Nullable != nil && *js.Columns[mc.Name].Nullable {
			col.Nullable = true
		}
		v.Columns = append(v.Columns, col)
		v.index[mc.Name] = i
	}
	if a, b := sameNameButCase(v.Columns); a != "" && !c.restoring {
		return nil, cdc.Rejectf(cdc.ReasonBadMetadata, "table %s has columns %q and %q, whose names differ only in case: DuckDB and Spark match column names case-insensitively and would read one for the other; rename one at the source",
			md.Table, a, b)
	}
	var clash string
	v.fieldNames, clash = fieldNames(v.Columns, reserved)
	if clash != "" && !c.restoring {
		// Writing it under its own name would let the name mean another
		// column in a version without the other one, which readers that
		// union versions by name would mix.
		return nil, cdc.Rejectf(cdc.ReasonBadMetadata, "table %s has a column %q, which readers with Hive partitioning would take for the %s= folder, and a column %q, the name the first is written under; rename one at the source",
			md.Table, clash, strings.ToLower(clash), clash+"_")
	}
	v.Schema = c.arrowSchema(v)
	return v, nil
}

// keepTimestamp keeps a column a timestamp when the table's version in
// force has it as one and its source type (sourceType) says more
// fractional digits than a microsecond, which new columns keep as text
// (t): versions written before that rule had such columns as timestamps,
// and a change to text would make Iceberg replace the column (its
// earlier rows then read as null) and Spark's schema merge fail. Values
// with digits below the microsecond go on being refused there.
func keepTimestamp(st *tableState, name, sourceType string, t Type) Type {
	if t.Kind != KindString || !finerThanMicros(sourceType) || st == nil || st.current == nil {
		return t
	}
	if i, ok := st.current.index[name]; ok && st.current.Columns[i].Type.Kind == KindTimestamp {
		return st.current.Columns[i].Type
	}
	return t
}

func (c *Catalog) hint(table, column string) *Type {
	if t, ok := c.opts.Hints[table+":"+column]; ok {
		return &t
	}
	if t, ok := c.opts.Hints["*:"+column]; ok {
		return &t
	}
	return nil
}

// jsonSchemaFor returns the newest JSON Schema record for table.
//
// A schema that names the table wins over a newer one whose id only ends
// with its name: PDB1.SALES.ORDERS's schema must not replace the one of
// SALES.ORDERS.
func (c *Catalog) jsonSchemaFor(table string) *JSONSchemaInfo {
	var suffixed *JSONSchemaInfo
	for i := len(c.order) - 1; i >= 0; i-- {
		s := c.schemas[c.order[i]]
		if len(s.Columns) == 0 {
			continue
		}
		if s.namesTable(table) {
			return s
		}
		if suffixed == nil && s.MatchesTable(table) {
			suffixed = s
		}
	}
	return suffixed
}

// arrowSchema builds the data-file schema: op_type, op_ts, xid, pos, the
// table's columns in metadata order, then the optional metacolumns.
func (c *Catalog) arrowSchema(v *Version) *arrow.Schema {
	fields := []arrow.Field{
		{Name: ColOpType, Type: arrow.BinaryTypes.String},
		{Name: ColOpTS, Type: TimestampType},
		{Name: ColXID, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: ColPos, Type: arrow.BinaryTypes.String, Nullable: true},
	}
	var before []arrow.Field
	for i, col := range v.Columns {
		keys := []string{"key", "source_type", "type_from"}
		values := []string{strconv.FormatBool(col.Key), col.SourceType, col.TypeFrom}
		name := v.fieldNames[i]
		if name != col.Name {
			keys, values = append(keys, "source_name"), append(values, col.Name)
		}
		md := arrow.NewMetadata(keys, values)
		fields = append(fields, arrow.Field{Name: name, Type: col.Type.Arrow(), Nullable: col.Nullable, Metadata: md})
		before = append(before, arrow.Field{Name: name, Type: col.Type.Arrow(), Nullable: true, Metadata: md})
	}
	fields = append(fields,
		arrow.Field{Name: ColAbsentColumns, Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		arrow.Field{Name: ColSrcPartition, Type: arrow.BinaryTypes.String},
		arrow.Field{Name: ColSrcOffset, Type: arrow.PrimitiveTypes.Int64})
	if v.Metadata.Format == cdc.FormatQlik {
		fields = append(fields,
			arrow.Field{Name: ColChangeSeq, Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: ColTxnEventCounter, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: ColTxnLastEvent, Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
			arrow.Field{Name: ColChangedColumns, Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true})
	}
	if c.opts.BeforeImage {
		fields = append(fields, arrow.Field{Name: ColBeforeImage, Type: arrow.StructOf(before...), Nullable: true})
	}
	meta := arrow.NewMetadata([]string{"table"}, []string{v.Table})
	return arrow.NewSchema(fields, &meta)
}

// sameTypes reports whether a and b have the same columns with the same
// types (and source ranges), whatever their order, nullability and keys:
// readers match a version's files by column name.
func sameTypes(a, b []Column) bool {
	if len(a) != len(b) {
		return false
	}
	byName := make(map[string]*Column, len(a))
	for i := range a {
		byName[a[i].Name] = &a[i]
	}
	for _, c := range b {
		o := byName[c.Name]
		if o == nil || o.Type != c.Type || o.Range != c.Range {
			return false
		}
	}
	return true
}

func sameColumns(a, b []Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type != b[i].Type || a[i].Nullable != b[i].Nullable || a[i].Key != b[i].Key || a[i].Range != b[i].Range {
			return false
		}
	}
	return true
}
