package cdc

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/buger/jsonparser"
)

// GoldenGateNames are the field names and op strings of a GoldenGate Data
// Streams record. Data Streams lets users rename them at the source
// (metaFields.qualifiedTable, custom before/after names, custom op strings);
// the zero value of a field means its documented default.
type GoldenGateNames struct {
	QualTable string `yaml:"qual_table"` // default "qual_table"
	OpType    string `yaml:"op_type"`    // default "op_type"
	OpTS      string `yaml:"op_ts"`      // default "op_ts"
	XID       string `yaml:"xid"`        // default "xid"
	Pos       string `yaml:"pos"`        // default "pos"
	Before    string `yaml:"before"`     // default "before"
	After     string `yaml:"after"`      // default "after"
	Insert    string `yaml:"insert"`     // default "INSERT"
	Update    string `yaml:"update"`     // default "UPDATE"
	Delete    string `yaml:"delete"`     // default "DELETE"
	Upsert    string `yaml:"upsert"`     // default "UPSERT"
}

// withDefaults fills every empty name with its documented default.
func (n GoldenGateNames) withDefaults() GoldenGateNames {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&n.QualTable, defaultQualTable)
	def(&n.OpType, "op_type")
	def(&n.OpTS, "op_ts")
	def(&n.XID, "xid")
	def(&n.Pos, "pos")
	def(&n.Before, "before")
	def(&n.After, "after")
	def(&n.Insert, "INSERT")
	def(&n.Update, "UPDATE")
	def(&n.Delete, "DELETE")
	def(&n.Upsert, "UPSERT")
	return n
}

// reservedFields are names with a fixed meaning in Data Streams records
// (metadata, DDL, schema records, the CloudEvents envelope, the optional
// catalog/schema/table fields); a renamed field may not take one.
var reservedFields = map[string]bool{"columns": true, "ddl": true, "data": true, "specversion": true, "$schema": true,
	"id": true, "properties": true, "catalog": true, "schema": true, "table": true}

// GoldenGate decodes Oracle GoldenGate Data Streams JSON records, plain or
// inside a CloudEvents envelope. A GoldenGate value is not safe for
// concurrent use; use one per decoding goroutine.
type GoldenGate struct {
	names  GoldenGateNames
	intern interner
	ix     jsonIndex // of the record being decoded
	// keys remembers, per table, the field names of its last before and
	// after images by position: the next record of the table almost
	// always lists the same names in the same order, and comparing with
	// the name in the same place is cheaper than a lookup per field.
	// Each entry also holds the table's name as first seen (interned),
	// so that a record naming its table by qual_table costs one lookup
	// for both (with hundreds of tables, each lookup of a 500-entry map
	// was a cache miss or two).
	keys map[string]*imageKeys
}

type imageKeys struct {
	before, after []string
	table         string // the table's name, the map's key
}

// maxKeyTables and maxCachedFields bound keys (past the first it starts
// over; fields past the second are looked up every time), so hostile input
// cannot grow it: databases allow about a thousand columns a table.
const (
	maxKeyTables    = 4096
	maxCachedFields = 1024
)

// NewGoldenGate returns a decoder for records that use names. It fails when
// two roles share one field name or one op string, since the records could
// then not be read unambiguously.
func NewGoldenGate(names GoldenGateNames) (*GoldenGate, error) {
	n := names.withDefaults()
	fields := map[string]string{}
	for role, name := range map[string]string{"qual_table": n.QualTable, "op_type": n.OpType, "op_ts": n.OpTS,
		"xid": n.XID, "pos": n.Pos, "before": n.Before, "after": n.After} {
		if other, dup := fields[name]; dup {
			return nil, fmt.Errorf("goldengate field names: %q is configured for both %s and %s; give each field its own name", name, role, other)
		}
		if reservedFields[name] {
			return nil, fmt.Errorf("goldengate field names: %s cannot be %q, which the record format itself uses", role, name)
		}
		fields[name] = role
	}
	ops := map[string]string{}
	for role, s := range map[string]string{"insert": n.Insert, "update": n.Update, "delete": n.Delete, "upsert": n.Upsert} {
		if other, dup := ops[s]; dup {
			return nil, fmt.Errorf("goldengate op strings: %q is configured for both %s and %s", s, role, other)
		}
		if s == "DDL" || s == "OBJECT_METADATA" || s == "STREAM_METADATA" {
			return nil, fmt.Errorf("goldengate op strings: %s cannot be %q, which names a record class", role, s)
		}
		ops[s] = role
	}
	return &GoldenGate{names: n, intern: newInterner(), keys: map[string]*imageKeys{}}, nil
}

// Names returns the effective field names, defaults filled in.
func (d *GoldenGate) Names() GoldenGateNames { return d.names }

// Decode parses one record into rec, which is reset first. On bad input it
// returns a *RejectError; rec is then partially filled and must not be used
// except for diagnostics.
func (d *GoldenGate) Decode(data []byte, rec *Record) error {
	rec.Reset()
	if err := d.decode(data, rec, 0); err != nil {
		return err
	}
	return rec.checkText()
}

// defaultQualTable is the table name's field unless metaFields renames it.
const defaultQualTable = "qual_table"

type ggTop struct {
	qualTable, opType, opTS, xid, pos           []byte
	beforeIx, afterIx                           int // in jsonIndex.top, -1 when absent
	hasQual, hasOpType, hasOpTS, hasXID, hasPos bool
	beforeType, afterType                       jsonparser.ValueType
	opTSType, xidType, posType                  jsonparser.ValueType
	columns, ddl, data                          []byte
	dataType                                    jsonparser.ValueType
	hasColumns, hasDDL, hasData                 bool
	specversion, schemaDialect, id, properties  bool
	idValue                                     []byte
	idType                                      jsonparser.ValueType
	catalog, schema, table                      []byte
	// defaultQual is qual_table's value when metaFields renamed the
	// table's field (hasDefaultQual: a string).
	defaultQual    []byte
	hasDefaultQual bool
}

func (d *GoldenGate) decode(data []byte, rec *Record, depth int) error {
	// One validating pass indexes the record and its images; a lenient
	// parser would skip over much that is not JSON, and validating first
	// keeps "malformed" an explicit, testable decision.
	if !scanJSON(data, &d.ix) {
		return Rejectf(ReasonMalformedJSON, "record is not valid JSON")
	}
	return d.decodeIndexed(data, rec, depth)
}

// decodeIndexed is decode once d.ix indexes data, which is valid JSON.
func (d *GoldenGate) decodeIndexed(data []byte, rec *Record, depth int) error {
	ix := &d.ix
	if !ix.isObj {
		return Rejectf(ReasonMalformedJSON, "record is not a JSON object")
	}
	t := ggTop{beforeIx: -1, afterIx: -1}
	n := &d.names
	// The fields a change is made of, each once: of two values for one,
	// which the source meant is unknown.
	var seen [7]bool
	once := func(i int, name string) error {
		if seen[i] {
			return Rejectf(ReasonMalformedJSON, "field %q appears twice in the record", name)
		}
		seen[i] = true
		return nil
	}
	for k := range ix.top {
		m := &ix.top[k]
		key, value, vt := m.key, m.value, m.vt
		if m.keyEscaped {
			u, err := jsonparser.Unescape(key, nil)
			if err != nil {
				return Rejectf(ReasonMalformedJSON, "cannot read record: key %q: %v", truncate(string(key), 64), err)
			}
			key = u
		}
		var err error
		switch string(key) {
		case n.QualTable:
			t.qualTable, t.hasQual = value, vt == jsonparser.String
			err = once(0, n.QualTable)
		case n.OpType:
			t.opType, t.hasOpType = value, vt == jsonparser.String
			err = once(1, n.OpType)
		case n.OpTS:
			t.opTS, t.opTSType, t.hasOpTS = value, vt, vt != jsonparser.Null
			err = once(2, n.OpTS)
		case n.XID:
			t.xid, t.xidType, t.hasXID = value, vt, vt != jsonparser.Null
			err = once(3, n.XID)
		case n.Pos:
			t.pos, t.posType, t.hasPos = value, vt, vt != jsonparser.Null
			err = once(4, n.Pos)
		case n.Before:
			t.beforeType, t.beforeIx = vt, k
			err = once(5, n.Before)
		case n.After:
			t.afterType, t.afterIx = vt, k
			err = once(6, n.After)
		case "columns":
			t.columns, t.hasColumns = value, vt == jsonparser.Object
		case "ddl":
			t.ddl, t.hasDDL = value, vt == jsonparser.Object
		case "data":
			t.data, t.dataType, t.hasData = value, vt, true
		case "specversion":
			t.specversion = true
		case "$schema":
			t.schemaDialect = true
		case "id":
			t.id, t.idValue, t.idType = true, value, vt
		case "properties":
			t.properties = vt == jsonparser.Object
		// Optional name metadata is only a name when it is a string.
		case "catalog":
			if vt == jsonparser.String {
				t.catalog = value
			}
		case "schema":
			if vt == jsonparser.String {
				t.schema = value
			}
		case "table":
			if vt == jsonparser.String {
				t.table = value
			}
		case defaultQualTable: // last: a configured name that is qual_table is what it says
			t.defaultQual, t.hasDefaultQual = value, vt == jsonparser.String
		}
		if err != nil {
			return err
		}
	}

	// CloudEvents: the GoldenGate record is the data member.
	if t.specversion && t.hasData && !d.namesOp(&t) {
		if depth > 0 {
			return Rejectf(ReasonMalformedJSON, "CloudEvents envelope nested inside another")
		}
		switch t.dataType {
		case jsonparser.Object:
			return d.decode(t.data, rec, depth+1)
		case jsonparser.String:
			// data carried as a JSON text inside a string
			inner, err := jsonparser.Unescape(t.data, nil)
			if err != nil || !validJSON(inner) {
				return Rejectf(ReasonMalformedJSON, "CloudEvents data string is not a JSON record")
			}
			return d.decode(append([]byte(nil), inner...), rec, depth+1)
		default:
			return Rejectf(ReasonMalformedJSON, "CloudEvents data member is %s, want a JSON object", t.dataType)
		}
	}
	rec.Body = data

	// Schema records carry no op_type: recognise them by structure.
	if (t.schemaDialect || (t.id && t.properties)) && !d.namesOp(&t) {
		// ParseString accepts any bytes, so check the type first: an
		// object or number id must not become a cache key.
		id, err := jsonparser.ParseString(t.idValue)
		if t.idType != jsonparser.String || err != nil || id == "" {
			return Rejectf(ReasonMalformedJSON, "JSON Schema record without a string id")
		}
		rec.Class = ClassSchema
		rec.SchemaID = id
		return nil
	}
	if !t.hasOpType {
		return Rejectf(ReasonMissingField, "record has no %q field and is not a JSON Schema record", n.OpType)
	}

	opType, err := t.opText()
	if err != nil {
		return Rejectf(ReasonMalformedJSON, "%s is not a valid string", n.OpType)
	}
	rec.OpType = d.opString(opType)
	switch rec.OpType {
	case "STREAM_METADATA":
		rec.Class = ClassStreamMetadata
		return nil
	case "OBJECT_METADATA":
		rec.Class = ClassObjectMetadata
		t.useDefaultQual()
		if _, err := d.table(&t, rec); err != nil {
			return err
		}
		if !t.hasColumns {
			return Rejectf(ReasonBadMetadata, "OBJECT_METADATA for %s has no columns object", rec.Table)
		}
		// op_ts, xid and pos are optional here, but when present they say
		// where the version this metadata opens begins.
		if err := d.meta(&t, rec, false); err != nil {
			return err
		}
		return d.columns(t.columns, rec)
	case "DDL":
		rec.Class = ClassDDL
		if !t.hasDDL {
			return Rejectf(ReasonMissingField, "DDL record has no ddl object")
		}
		if err := d.ddl(t.ddl, rec); err != nil {
			return err
		}
		t.useDefaultQual()
		if t.hasQual {
			if _, err := d.table(&t, rec); err != nil {
				return err
			}
		} else {
			rec.Table = joinQualified(rec.DDL.Catalog, rec.DDL.Schema, rec.DDL.Object)
			if rec.Table == "" {
				return Rejectf(ReasonBadTableName, "DDL record names no object")
			}
		}
		return d.meta(&t, rec, false)
	case n.Insert:
		rec.Op = OpInsert
	case n.Update:
		rec.Op = OpUpdate
	case n.Delete:
		rec.Op = OpDelete
	case n.Upsert:
		rec.Op = OpUpsert
	default:
		return Rejectf(ReasonUnknownOp, "unknown %s %q (expected %s, %s, %s, %s, OBJECT_METADATA, DDL or STREAM_METADATA)",
			n.OpType, truncate(rec.OpType, 64), n.Insert, n.Update, n.Delete, n.Upsert)
	}
	rec.Class = ClassDML
	keys, err := d.table(&t, rec)
	if err != nil {
		return err
	}
	if err := d.meta(&t, rec, true); err != nil {
		return err
	}
	if err := d.image(t.beforeIx, t.beforeType, &rec.Before, n.Before, &keys.before); err != nil {
		return err
	}
	if err := d.image(t.afterIx, t.afterType, &rec.After, n.After, &keys.after); err != nil {
		return err
	}
	if !rec.RowImage().Present {
		want := n.After
		if rec.Op == OpDelete {
			want = n.Before
		}
		return Rejectf(ReasonMissingImage, "%s record for %s has no %s image", rec.Op, rec.Table, want)
	}
	return nil
}

// useDefaultQual takes the table's name from qual_table when the
// renamed field (metaFields.qualifiedTable) is absent. The rename is
// documented for DML records; the metadata and DDL records' own field is
// qual_table, and a stream that keeps it there must not lose the table's
// metadata. DML stays strict: it names its table by the configured field.
func (t *ggTop) useDefaultQual() {
	if !t.hasQual && t.hasDefaultQual {
		t.qualTable, t.hasQual = t.defaultQual, true
	}
}

// table sets rec.Table from qual_table or, when the source was configured
// without it, from optional catalog/schema/table metadata, and returns the
// image keys remembered for the table.
func (d *GoldenGate) table(t *ggTop, rec *Record) (*imageKeys, error) {
	if t.hasQual && !hasEscape(t.qualTable) {
		if k := d.keys[string(t.qualTable)]; k != nil {
			rec.Table = k.table // no copy, and the image keys found by the same lookup
			return k, nil
		}
		rec.Table = d.intern.bytes(t.qualTable)
	} else if t.hasQual {
		s, err := jsonparser.ParseString(t.qualTable)
		if err != nil {
			return nil, Rejectf(ReasonMalformedJSON, "%s is not a valid string", d.names.QualTable)
		}
		if unpairedSurrogate(t.qualTable) {
			return nil, Rejectf(ReasonMalformedJSON, "%s: %v", d.names.QualTable, errUnpairedSurrogate)
		}
		rec.Table = d.intern.string(s)
	} else if t.table != nil {
		cat, _ := jsonparser.ParseString(t.catalog)
		sch, _ := jsonparser.ParseString(t.schema)
		tab, _ := jsonparser.ParseString(t.table)
		rec.Table = joinQualified(cat, sch, tab)
		if unpairedSurrogate(t.catalog) || unpairedSurrogate(t.schema) || unpairedSurrogate(t.table) {
			return nil, Rejectf(ReasonMalformedJSON, "table name: %v", errUnpairedSurrogate)
		}
	}
	if rec.Table == "" {
		return nil, Rejectf(ReasonBadTableName, "record has no table name (field %q)", d.names.QualTable)
	}
	return tableKeys(d.keys, rec.Table), nil
}

// meta reads op_ts, xid and pos. op_ts is required for DML because the date
// partition and the op_ts column come from it.
func (d *GoldenGate) meta(t *ggTop, rec *Record, required bool) error {
	n := &d.names
	if t.hasOpTS {
		if t.opTSType != jsonparser.String {
			return Rejectf(ReasonBadOpTS, "%s is a %s, want an ISO 8601 string", n.OpTS, t.opTSType)
		}
		raw := t.opTS
		if hasEscape(raw) {
			// A JSON string may spell any character as an escape
			// ("\u002e"); parse the text it stands for.
			u, err := jsonparser.Unescape(raw, nil)
			if err != nil {
				return Rejectf(ReasonBadOpTS, "%s is not a valid string", n.OpTS)
			}
			raw = u
		}
		ts, err := ParseOpTS(raw)
		if err != nil {
			return Rejectf(ReasonBadOpTS, "%s %q: %v", n.OpTS, truncate(string(t.opTS), 64), err)
		}
		rec.OpTS, rec.HasOpTS = ts, true
	} else if required {
		return Rejectf(ReasonBadOpTS, "record has no %s", n.OpTS)
	}
	// A string by the format; numbers (and booleans) keep their text,
	// but an object or array is no identifier or position.
	if compound(t.xidType) {
		return Rejectf(ReasonMalformedJSON, "%s is an %s, want a string", n.XID, t.xidType)
	}
	if compound(t.posType) {
		return Rejectf(ReasonMalformedJSON, "%s is an %s, want a string", n.Pos, t.posType)
	}
	// Unescaped, such a surrogate would become U+FFFD: another pos (and
	// two positions could read alike) or another transaction.
	if t.hasXID && hasEscape(t.xid) && unpairedSurrogate(t.xid) {
		return Rejectf(ReasonMalformedJSON, "%s: %v", n.XID, errUnpairedSurrogate)
	}
	if t.hasPos && hasEscape(t.pos) && unpairedSurrogate(t.pos) {
		return Rejectf(ReasonMalformedJSON, "%s: %v", n.Pos, errUnpairedSurrogate)
	}
	text := scalarText
	if rec.Class == ClassDML {
		text = scalarView
	}
	if t.hasXID {
		rec.XID, rec.HasXID = text(t.xid), true
	}
	if t.hasPos {
		rec.Pos, rec.HasPos = text(t.pos), true
	}
	return nil
}

func compound(vt jsonparser.ValueType) bool {
	return vt == jsonparser.Object || vt == jsonparser.Array
}

// scalarText returns a scalar as text: strings unescaped, numbers verbatim.
func scalarText(v []byte) string {
	if s, err := jsonparser.ParseString(v); err == nil {
		return s
	}
	return string(v)
}

// scalarView is scalarText without a copy when the text is v itself (no
// escapes): the string then shares v's memory, as a DML record's field
// values do. Two strings a record were half of all the objects a run
// allocated.
func scalarView(v []byte) string {
	if len(v) == 0 || hasEscape(v) {
		return scalarText(v)
	}
	return unsafe.String(&v[0], len(v))
}

// image reads the row image that is member k of the record, from the index.
func (d *GoldenGate) image(k int, vt jsonparser.ValueType, im *Image, name string, last *[]string) error {
	switch vt {
	case jsonparser.NotExist, jsonparser.Null:
		return nil
	case jsonparser.Object:
	default:
		return Rejectf(ReasonMalformedJSON, "%s image is a %s, want an object", name, vt)
	}
	im.Present = true
	m := &d.ix.top[k]
	return appendFields(im, d.ix.members(m), d.intern, last, name)
}

// tableKeys returns the image keys remembered for table.
func tableKeys(keys map[string]*imageKeys, table string) *imageKeys {
	k := keys[table]
	if k == nil {
		if len(keys) >= maxKeyTables {
			clear(keys)
		}
		k = &imageKeys{table: table}
		keys[table] = k
	}
	return k
}

// appendFields appends an image's members as fields, naming each from last
// (the names the table's previous image had in the same places) when they
// match, else by interning.
func appendFields(im *Image, members []jsonMember, intern interner, last *[]string, imageName string) error {
	for i := range members {
		f := &members[i]
		key := f.key
		if f.keyEscaped {
			u, err := jsonparser.Unescape(key, nil)
			if err == nil && unpairedSurrogate(key) {
				err = errUnpairedSurrogate
			}
			if err != nil {
				// Every failure of Decode is a RejectError, never a parser error.
				return Rejectf(ReasonMalformedJSON, "cannot read %s image: key %q: %v", imageName, truncate(string(key), 64), err)
			}
			key = u
		}
		var fname string
		if i < len(*last) && string(key) == (*last)[i] {
			fname = (*last)[i]
		} else {
			fname = intern.bytes(key)
			if i < len(*last) {
				(*last)[i] = fname
			} else if i < maxCachedFields {
				*last = append(*last, fname)
			}
		}
		im.Fields = append(im.Fields, Field{Name: fname, Value: f.value, Type: valueType(f.vt), Plain: f.plain})
	}
	return nil
}

func (d *GoldenGate) columns(v []byte, rec *Record) error {
	md := &rec.Metadata
	md.Table = rec.Table
	// A map, not a scan of the columns so far: a hostile record with many
	// columns must not cost quadratic time.
	seen := map[string]struct{}{}
	err := jsonparser.ObjectEach(v, func(key, value []byte, vt jsonparser.ValueType, _ int) error {
		if vt != jsonparser.Object {
			return Rejectf(ReasonBadMetadata, "column %q of %s is a %s, want an object", key, rec.Table, vt)
		}
		if bytes.ContainsRune(key, utf8.RuneError) {
			// Read unescaped: an unpaired surrogate escape would read as
			// U+FFFD, and two columns could read alike.
			return Rejectf(ReasonBadMetadata, "column name %q of %s holds U+FFFD: an unpaired UTF-16 surrogate escape, or text that is not UTF-8", key, rec.Table)
		}
		c := Column{Name: string(key), Nullable: true}
		if s, err := jsonparser.GetString(value, "type"); err == nil {
			c.Type = s
		}
		if b, err := jsonparser.GetBoolean(value, "null"); err == nil {
			c.Nullable = b
		}
		if b, err := jsonparser.GetBoolean(value, "key"); err == nil {
			c.Key = b
		}
		if _, dup := seen[c.Name]; dup {
			return Rejectf(ReasonBadMetadata, "column %q of %s is listed twice", c.Name, rec.Table)
		}
		seen[c.Name] = struct{}{}
		md.Columns = append(md.Columns, c)
		return nil
	})
	if err != nil {
		if re, ok := AsReject(err); ok {
			return re
		}
		return Rejectf(ReasonBadMetadata, "cannot read columns of %s: %v", rec.Table, err)
	}
	if len(md.Columns) == 0 {
		return Rejectf(ReasonBadMetadata, "OBJECT_METADATA for %s lists no columns", rec.Table)
	}
	return nil
}

func (d *GoldenGate) ddl(v []byte, rec *Record) error {
	get := func(keys ...string) string {
		s, err := jsonparser.GetString(v, keys...)
		if err != nil {
			return ""
		}
		return s
	}
	rec.DDL = DDL{
		Catalog:   get("object", "catalog"),
		Schema:    get("object", "schema"),
		Object:    get("object", "object"),
		Statement: get("statement"),
	}
	if strings.ContainsRune(rec.DDL.Catalog+rec.DDL.Schema+rec.DDL.Object, utf8.RuneError) {
		return Rejectf(ReasonMalformedJSON, "the DDL's object name holds U+FFFD: an unpaired UTF-16 surrogate escape, or text that is not UTF-8")
	}
	return nil
}

func joinQualified(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func valueType(vt jsonparser.ValueType) ValueType {
	switch vt {
	case jsonparser.String:
		return TypeString
	case jsonparser.Number:
		return TypeNumber
	case jsonparser.Boolean:
		return TypeBool
	case jsonparser.Object:
		return TypeObject
	case jsonparser.Array:
		return TypeArray
	}
	return TypeNull
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Text returns the value of a string field unescaped, using buf as scratch
// space; for other types it returns the raw JSON text.
func (f *Field) Text(buf []byte) ([]byte, error) {
	if f.Type != TypeString {
		return f.Value, nil
	}
	if f.Plain || !hasEscape(f.Value) {
		return f.Value, nil
	}
	out, err := jsonparser.Unescape(f.Value, buf[:cap(buf)])
	if err != nil {
		return nil, errors.New("invalid string escape")
	}
	if bytes.ContainsRune(out, utf8.RuneError) && unpairedSurrogate(f.Value) {
		// Unescaped as U+FFFD: a value the source never had.
		return nil, errUnpairedSurrogate
	}
	return out, nil
}

// errUnpairedSurrogate rejects a string that escapes half of a UTF-16
// surrogate pair: unescaped, it would read as U+FFFD, a text the source
// never had.
var errUnpairedSurrogate = errors.New("string holds an unpaired UTF-16 surrogate escape (\\uD800 to \\uDFFF), which names no character")

// unpairedSurrogate reports whether the JSON string text s (without its
// quotes) escapes a UTF-16 surrogate that is not half of a pair.
func unpairedSurrogate(s []byte) bool {
	unit := func(i int) (rune, bool) { // the \uXXXX escape at s[i:]
		if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		r, ok := unit(i)
		if !ok {
			i++ // another escape: skip its character
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := unit(i + 6); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				i += 11
				continue
			}
			return true
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		}
		i += 5
	}
	return false
}

// opText is the op-type field's string, unescaped.
func (t *ggTop) opText() ([]byte, error) {
	if !hasEscape(t.opType) {
		return t.opType, nil
	}
	return jsonparser.Unescape(t.opType, nil)
}

// namesOp reports whether the record's op-type field names a kind of
// record or an operation. With --gg-op-type-field type, the CloudEvents
// envelope's and schema records' own "type" ("object", an event type)
// must not make them operations.
func (d *GoldenGate) namesOp(t *ggTop) bool {
	if !t.hasOpType {
		return false
	}
	op, err := t.opText()
	if err != nil {
		return true // the operation's own check says what is wrong
	}
	n := &d.names
	switch string(op) {
	case "STREAM_METADATA", "OBJECT_METADATA", "DDL", n.Insert, n.Update, n.Delete, n.Upsert:
		return true
	}
	return false
}

// opString returns op as a string, without a copy for the known op strings.
func (d *GoldenGate) opString(op []byte) string {
	n := &d.names
	switch string(op) {
	case n.Insert:
		return n.Insert
	case n.Update:
		return n.Update
	case n.Delete:
		return n.Delete
	case n.Upsert:
		return n.Upsert
	}
	return string(op)
}

func hasEscape(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}
