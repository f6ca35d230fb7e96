package cdc

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/buger/jsonparser"
)

// QlikOptions configure the Qlik Replicate decoder.
type QlikOptions struct {
	// DefaultTable names the table of data messages that carry no schema
	// and table (Qlik leaves them out unless configured to add them).
	DefaultTable string
}

// Qlik decodes Qlik Replicate Kafka-target JSON: data messages (headers,
// data, beforeData) and metadata messages (lineage, tableStructure), bare
// or inside the {"magic":"atMSG","type":"DT"|"MD","message":...} envelope.
// A Qlik value is not safe for concurrent use.
type Qlik struct {
	opts   QlikOptions
	intern interner
	ix     jsonIndex // of the message being decoded
	top    qlikTop   // the members of ix.top decoding reads
	keys   map[string]*imageKeys
	// tables maps a message's schema and table to the table's name,
	// built once (see tableName).
	tables map[qlikTable]string
}

type qlikTable struct{ schema, table string }

// NewQlik returns a Qlik decoder.
func NewQlik(opts QlikOptions) *Qlik {
	return &Qlik{opts: opts, intern: newInterner(), keys: map[string]*imageKeys{}, tables: map[qlikTable]string{}}
}

// Decode parses one message into rec, which is reset first.
func (d *Qlik) Decode(data []byte, rec *Record) error {
	if err := d.decode(data, rec); err != nil {
		return err
	}
	return rec.checkText()
}

func (d *Qlik) decode(data []byte, rec *Record) error {
	// One validating pass indexes the message, as for GoldenGate: a
	// lookup per member read the message eight times.
	if !scanJSON(data, &d.ix) {
		rec.Reset()
		rec.Format = FormatQlik
		return Rejectf(ReasonMalformedJSON, "message is not valid JSON")
	}
	return d.decodeIndexed(data, rec)
}

// decodeIndexed is decode once d.ix indexes data, which is valid JSON.
func (d *Qlik) decodeIndexed(data []byte, rec *Record) error {
	rec.Reset()
	rec.Format = FormatQlik
	ix := &d.ix
	if !ix.isObj {
		return Rejectf(ReasonMalformedJSON, "message is not a JSON object")
	}
	top := &d.top
	top.find(ix.top)
	if magic := top.magic; magic != nil {
		if magic.vt != jsonparser.String || string(magic.value) != "atMSG" {
			return Rejectf(ReasonMalformedJSON, "envelope magic is %q, want \"atMSG\"", truncate(string(magic.value), 32))
		}
		typ := stringOf(top.typ)
		msg := top.message
		if msg == nil || msg.vt != jsonparser.Object {
			return Rejectf(ReasonMissingField, "envelope has no message object")
		}
		switch typ {
		case "DT":
			inner := msg.value
			scanJSON(inner, ix) // valid: part of a valid message
			top.find(ix.top)
			return d.dataMessage(inner, rec)
		case "MD":
			return d.metadataMessage(msg.value, rec)
		}
		return Rejectf(ReasonUnknownOp, "envelope type %q is neither DT (data) nor MD (metadata)", truncate(typ, 32))
	}
	if top.lineage != nil || top.tableStructure != nil {
		return d.metadataMessage(data, rec)
	}
	if top.headers != nil {
		return d.dataMessage(data, rec)
	}
	return Rejectf(ReasonMissingField, "message has neither headers (data message) nor lineage/tableStructure (metadata message)")
}

// qlikTop holds the first member of each name that decoding reads at a
// message's top level, found in one pass: a lookup per name read the
// members nine times.
type qlikTop struct {
	magic, typ, message, lineage, tableStructure *jsonMember
	headers, table, schema, data, beforeData     *jsonMember
}

func (t *qlikTop) find(ms []jsonMember) {
	*t = qlikTop{}
	for i := range ms {
		m := &ms[i]
		var p **jsonMember
		switch memberKey(m) {
		case "magic":
			p = &t.magic
		case "type":
			p = &t.typ
		case "message":
			p = &t.message
		case "lineage":
			p = &t.lineage
		case "tableStructure":
			p = &t.tableStructure
		case "headers":
			p = &t.headers
		case "table":
			p = &t.table
		case "schema":
			p = &t.schema
		case "data":
			p = &t.data
		case "beforeData":
			p = &t.beforeData
		default:
			continue
		}
		if *p == nil {
			*p = m
		}
	}
}

// memberNamed returns the first member called key (as jsonparser.Get
// finds it), or nil.
func memberNamed(ms []jsonMember, key string) *jsonMember {
	for i := range ms {
		if memberKey(&ms[i]) == key {
			return &ms[i]
		}
	}
	return nil
}

// memberKey is a member's key unescaped ("" when it cannot be).
func memberKey(m *jsonMember) string {
	if !m.keyEscaped {
		return unsafe.String(unsafe.SliceData(m.key), len(m.key))
	}
	u, err := jsonparser.Unescape(m.key, nil)
	if err != nil {
		return ""
	}
	return string(u)
}

// stringMember is jsonparser.GetString of the first member called key:
// its text unescaped, or "" when it is missing or not a string. Without
// escapes, the text shares the message's memory.
func stringMember(ms []jsonMember, key string) string {
	return stringOf(memberNamed(ms, key))
}

// stringOf is the text of m unescaped, or "" when m is nil or not a string.
func stringOf(m *jsonMember) string {
	if m == nil || m.vt != jsonparser.String {
		return ""
	}
	return scalarView(m.value)
}

// members returns the members of m, an object indexed in ix.nested.
func (ix *jsonIndex) members(m *jsonMember) []jsonMember {
	if m.count == 0 {
		return nil
	}
	return ix.nested[m.first : m.first+m.count]
}

// dataMessage reads a data message that d.ix indexes.
func (d *Qlik) dataMessage(msg []byte, rec *Record) error {
	rec.Body = msg
	ix := &d.ix
	hm := d.top.headers
	if hm == nil || hm.vt != jsonparser.Object {
		return Rejectf(ReasonMissingField, "data message has no headers object")
	}
	headers := ix.members(hm)
	var opName, ts, streamPos, changeSeq, xid []byte
	var hasTS, hasXID, badTS bool
	var badMask, badCounter *jsonMember
	q := &rec.Qlik
	for i := range headers {
		m := &headers[i]
		value, vt := m.value, m.vt
		if vt == jsonparser.String && len(value) == 0 {
			// Full-load messages carry empty strings for CDC-only headers.
			continue
		}
		switch key := memberKey(m); key {
		case "operation":
			opName = value
		case "timestamp":
			ts, hasTS = value, vt == jsonparser.String
			badTS = vt != jsonparser.String && vt != jsonparser.Null
		case "streamPosition":
			if vt == jsonparser.String || vt == jsonparser.Number {
				streamPos = value // a number is kept as its text
			}
		case "changeSequence":
			if vt == jsonparser.String || vt == jsonparser.Number {
				changeSeq = value
			}
		case "transactionId":
			xid, hasXID = value, vt != jsonparser.Null
		case "changeMask", "columnMask":
			// A mask is a string of hex digits; one sent as anything else
			// cannot say which columns it covers, and dropping it would
			// lose columnMask's line between a null and a column that
			// was not replicated.
			mask := &q.ChangeMask
			if key == "columnMask" {
				mask = &q.ColumnMask
			}
			switch vt {
			case jsonparser.String:
				*mask = scalarView(value)
			case jsonparser.Null:
			default:
				badMask = m // rejected where the masks are checked, after the operation
			}
		case "transactionEventCounter", "transactionLastEvent":
			// Kept in their own columns: a value that is not what the
			// column holds goes to the dead letters rather than in as null.
			if vt == jsonparser.Null {
				break
			}
			if vt == jsonparser.String && hasEscape(value) {
				if u, err := jsonparser.Unescape(value, nil); err == nil {
					value = u
				}
			}
			var ok bool
			if key == "transactionEventCounter" {
				q.EventCounter, ok = eventCounter(value, vt)
				q.HasEventCounter = ok
			} else {
				q.LastEvent, ok = lastEvent(value, vt)
				q.HasLastEvent = ok
			}
			if !ok && badCounter == nil {
				badCounter = m
			}
		}
	}
	if badTS {
		return Rejectf(ReasonBadOpTS, "headers.timestamp is %s, want an ISO 8601 string", truncate(string(ts), 64))
	}
	op := scalarView(opName)
	switch op {
	case "INSERT":
		rec.Op, rec.OpType = OpInsert, "INSERT"
	case "UPDATE":
		rec.Op, rec.OpType = OpUpdate, "UPDATE"
	case "DELETE":
		rec.Op, rec.OpType = OpDelete, "DELETE"
	case "REFRESH":
		rec.Op, rec.OpType = OpRefresh, "REFRESH"
	default:
		return Rejectf(ReasonUnknownOp, "unknown operation %q (expected REFRESH, INSERT, UPDATE or DELETE)", truncate(op, 64))
	}
	rec.Class = ClassDML
	if err := d.table(headers, rec); err != nil {
		return err
	}
	if hasTS {
		var err error
		if !hasEscape(ts) {
			rec.OpTS, err = ParseOpTS(ts)
		} else {
			var t string
			if t, err = jsonparser.ParseString(ts); err == nil {
				rec.OpTS, err = ParseOpTS([]byte(t))
			}
		}
		if err != nil {
			return Rejectf(ReasonBadOpTS, "timestamp %q: %v", truncate(string(ts), 64), err)
		}
		rec.HasOpTS = true
	} else if rec.Op != OpRefresh {
		// Full-load rows carry no timestamp; the pipeline dates them.
		return Rejectf(ReasonBadOpTS, "%s message has no headers.timestamp", op)
	}
	if hasXID {
		rec.XID, rec.HasXID = scalarView(xid), true
	}
	switch {
	case streamPos != nil:
		rec.Pos, rec.HasPos = scalarView(streamPos), true
	case changeSeq != nil:
		rec.Pos, rec.HasPos = scalarView(changeSeq), true
	}
	if changeSeq != nil {
		q.ChangeSeq = scalarView(changeSeq)
	}
	if badMask != nil {
		return Rejectf(ReasonBadMask, "headers.%s is %s, want a string of hex digits", memberKey(badMask), truncate(string(badMask.value), 64))
	}
	if !isHex(q.ChangeMask) {
		return Rejectf(ReasonBadMask, "changeMask %q: %v", truncate(q.ChangeMask, 64), errMaskNotHex)
	}
	if !isHex(q.ColumnMask) {
		return Rejectf(ReasonBadMask, "columnMask %q: %v", truncate(q.ColumnMask, 64), errMaskNotHex)
	}
	if badCounter != nil {
		return badTransactionHeader(memberKey(badCounter), badCounter.value, badCounter.vt)
	}
	keys := tableKeys(d.keys, rec.Table)
	if err := d.image(d.top.data, "data", &rec.After, &keys.after); err != nil {
		return err
	}
	if err := d.image(d.top.beforeData, "beforeData", &rec.Before, &keys.before); err != nil {
		return err
	}
	if !rec.RowImage().Present {
		return Rejectf(ReasonMissingImage, "%s message for %s has no data", op, rec.Table)
	}
	return nil
}

// table names a data message's table: schema and table of the message (or
// of its headers), else the configured default.
func (d *Qlik) table(headers []jsonMember, rec *Record) error {
	if tab := stringOf(d.top.table); tab != "" {
		rec.Table = d.tableName(stringOf(d.top.schema), tab)
		return nil
	}
	if tab := stringMember(headers, "table"); tab != "" {
		rec.Table = d.tableName(stringMember(headers, "schema"), tab)
		return nil
	}
	if d.opts.DefaultTable != "" {
		rec.Table = d.opts.DefaultTable
		return nil
	}
	return Rejectf(ReasonBadTableName, "message names no schema/table and no default table is configured (--qlik-table)")
}

// tableName is the qualified name of schema and table, looked up by
// their text: building and interning it for each message cost a few
// allocations per record.
func (d *Qlik) tableName(schema, table string) string {
	name, ok := d.tables[qlikTable{schema, table}]
	if !ok {
		if len(d.tables) >= maxKeyTables {
			clear(d.tables)
		}
		// New strings: the key and the name must not keep the message's memory.
		name = d.intern.string(qlikQualified(schema, table))
		d.tables[qlikTable{strings.Clone(schema), strings.Clone(table)}] = name
	}
	return name
}

// qlikQualified joins a Qlik schema and table name. Qlik sends them apart,
// so a part holding a dot (or a quote) is quoted as SQL quotes a name:
// schema "A.B" with table "C" is "A.B".C, schema "A" with table "B.C" is
// A."B.C"; joined plainly, the two tables were one.
func qlikQualified(schema, table string) string {
	return joinQualified(quoteDotted(schema), quoteDotted(table))
}

func quoteDotted(part string) string {
	if !strings.ContainsAny(part, `."`) {
		return part
	}
	return `"` + strings.ReplaceAll(part, `"`, `""`) + `"`
}

func (d *Qlik) image(m *jsonMember, key string, im *Image, last *[]string) error {
	if m == nil || m.vt == jsonparser.Null {
		return nil
	}
	if m.vt != jsonparser.Object {
		return Rejectf(ReasonMalformedJSON, "%s is a %s, want an object", key, m.vt)
	}
	im.Present = true
	return appendFields(im, d.ix.members(m), d.intern, last, key)
}

type qlikColumn struct {
	Ordinal            *int   `json:"ordinal"`
	Type               string `json:"type"`
	Length             int64  `json:"length"`
	Precision          int64  `json:"precision"`
	Scale              int64  `json:"scale"`
	PrimaryKeyPosition int64  `json:"primaryKeyPosition"`
	Nullable           *bool  `json:"nullable"`
}

type qlikMetadata struct {
	Lineage struct {
		Schema       string          `json:"schema"`
		Table        string          `json:"table"`
		TableVersion json.RawMessage `json:"tableVersion"`
		Timestamp    string          `json:"timestamp"`
	} `json:"lineage"`
	TableStructure struct {
		TableColumns map[string]qlikColumn `json:"tableColumns"`
	} `json:"tableStructure"`
}

// metadataMessage reads a table's structure. Metadata messages are rare,
// so the standard library decodes them.
func (d *Qlik) metadataMessage(msg []byte, rec *Record) error {
	rec.Body = msg
	rec.Class = ClassObjectMetadata
	var m qlikMetadata
	if err := json.Unmarshal(msg, &m); err != nil {
		return Rejectf(ReasonBadMetadata, "metadata message: %v", err)
	}
	rec.Table = qlikQualified(m.Lineage.Schema, m.Lineage.Table)
	if rec.Table == "" {
		rec.Table = d.opts.DefaultTable
	}
	if rec.Table == "" {
		return Rejectf(ReasonBadTableName, "metadata message names no lineage.schema/lineage.table")
	}
	if len(m.TableStructure.TableColumns) == 0 {
		return Rejectf(ReasonBadMetadata, "metadata message for %s has no tableStructure.tableColumns", rec.Table)
	}
	// Like the headers of full-load messages, a null or empty tableVersion
	// means there is none.
	if tv := string(m.Lineage.TableVersion); tv != "" && tv != "null" && tv != `""` {
		v, err := strconv.ParseInt(strings.Trim(tv, `"`), 10, 64)
		if err != nil {
			return Rejectf(ReasonBadMetadata, "lineage.tableVersion %s is not an integer", m.Lineage.TableVersion)
		}
		rec.Metadata.SourceVersion = v
		rec.Qlik.TableVersion, rec.Qlik.HasTableVersion = v, true
	}
	if m.Lineage.Timestamp != "" {
		if ts, err := ParseOpTS([]byte(m.Lineage.Timestamp)); err == nil {
			rec.OpTS, rec.HasOpTS = ts, true
		}
	}
	type ordered struct {
		ord int
		col Column
	}
	cols := make([]ordered, 0, len(m.TableStructure.TableColumns))
	seen := map[int]string{}
	// In name order, so that a bad message gets the same error each time.
	names := make([]string, 0, len(m.TableStructure.TableColumns))
	for name := range m.TableStructure.TableColumns {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := m.TableStructure.TableColumns[name]
		if c.Ordinal == nil || *c.Ordinal < 1 {
			return Rejectf(ReasonBadMetadata, "column %q of %s has no positive ordinal", name, rec.Table)
		}
		if other, dup := seen[*c.Ordinal]; dup {
			return Rejectf(ReasonBadMetadata, "columns %q and %q of %s share ordinal %d", other, name, rec.Table, *c.Ordinal)
		}
		seen[*c.Ordinal] = name
		col := Column{Name: name, Type: qlikPrimitive(c.Type), Nullable: c.Nullable == nil || *c.Nullable,
			Key: c.PrimaryKeyPosition > 0, NativeType: qlikNativeType(c)}
		cols = append(cols, ordered{*c.Ordinal, col})
	}
	sort.Slice(cols, func(i, j int) bool { return cols[i].ord < cols[j].ord })
	for i, c := range cols {
		if c.ord != i+1 {
			return Rejectf(ReasonBadMetadata, "ordinals of %s are not 1..%d (missing %d)", rec.Table, len(cols), i+1)
		}
		rec.Metadata.Columns = append(rec.Metadata.Columns, c.col)
	}
	rec.Metadata.Table = rec.Table
	rec.Metadata.Format = FormatQlik
	return nil
}

func qlikPrimitive(t string) string {
	switch strings.ToUpper(t) {
	case "INT1", "INT2", "INT4", "INT8", "UINT1", "UINT2", "UINT4", "UINT8", "NUMERIC", "REAL4", "REAL8":
		return "number"
	case "BOOLEAN":
		return "boolean"
	}
	return "string"
}

// qlikNativeType renders a Qlik column type with the parameters that
// matter for the lake: NUMERIC(p,s), STRING(n), and DATETIME(s) for more
// fractional digits than the lake's microsecond timestamps hold (SQL
// Server's datetime2(7), Oracle's TIMESTAMP(9)); a DATETIME of at most 6
// stays DATETIME, as earlier versions wrote it, so that metadata sent
// again does not open a schema version for nothing.
func qlikNativeType(c qlikColumn) string {
	t := strings.ToUpper(c.Type)
	switch t {
	case "NUMERIC":
		return fmt.Sprintf("NUMERIC(%d,%d)", c.Precision, c.Scale)
	case "STRING", "WSTRING", "BYTES":
		if c.Length > 0 {
			return fmt.Sprintf("%s(%d)", t, c.Length)
		}
	case "DATETIME":
		if c.Scale > lakeTimestampDigits {
			return fmt.Sprintf("DATETIME(%d)", c.Scale)
		}
	}
	return t
}

// lakeTimestampDigits is how many fractional digits of a second the lake's
// timestamps hold.
const lakeTimestampDigits = 6

// Auto decodes GoldenGate and Qlik messages in one stream, choosing per
// message by its top-level keys.
type Auto struct {
	GoldenGate *GoldenGate
	Qlik       *Qlik
}

// isQlikKey says whether key is a top-level key only Qlik messages have. beforeData is
// not one of them: every Qlik data message has headers anyway, and
// "beforeData" is a likely custom name for GoldenGate's before image
// (GoldenGateNames.Before), whose records must not be sent to the Qlik
// decoder.
func isQlikKey(key string) bool {
	switch key {
	case "magic", "headers", "lineage", "tableStructure":
		return true
	}
	return false
}

// Decode dispatches to the decoder of the message's format. Anything that
// is not recognisably Qlik goes to the GoldenGate decoder, which reports
// malformed input.
//
// The message is scanned once, into the index of the decoder it goes to:
// sniffing its keys with a separate pass read every GoldenGate record
// twice, 14% of the CPU of a run with the default --format.
func (a *Auto) Decode(data []byte, rec *Record) error {
	gg, q := a.GoldenGate, a.Qlik
	if !scanJSON(data, &gg.ix) {
		return gg.Decode(data, rec) // rejected there, as malformed
	}
	var err error
	if gg.ix.isObj && hasQlikKey(gg.ix.top) {
		gg.ix, q.ix = q.ix, gg.ix // the index's buffers change hands, not its members
		err = q.decodeIndexed(data, rec)
	} else {
		rec.Reset()
		err = gg.decodeIndexed(data, rec, 0)
	}
	if err != nil {
		return err
	}
	return rec.checkText()
}

// hasQlikKey says whether a message's top-level members include a Qlik
// key.
func hasQlikKey(top []jsonMember) bool {
	for i := range top {
		if isQlikKey(memberKey(&top[i])) {
			return true
		}
	}
	return false
}

// eventCounter reads transactionEventCounter, a number or its text.
func eventCounter(value []byte, vt jsonparser.ValueType) (int64, bool) {
	if vt != jsonparser.Number && vt != jsonparser.String {
		return 0, false
	}
	n, err := strconv.ParseInt(string(value), 10, 64)
	return n, err == nil
}

// lastEvent reads transactionLastEvent, a boolean or its text in any case.
func lastEvent(value []byte, vt jsonparser.ValueType) (last, ok bool) {
	if vt != jsonparser.Boolean && vt != jsonparser.String {
		return false, false
	}
	switch {
	case asciiEqualFold(value, "true"):
		return true, true
	case asciiEqualFold(value, "false"):
		return false, true
	}
	return false, false
}

// asciiEqualFold reports whether b is lower (ASCII letters only) in any
// case; unlike strings.EqualFold it does not take "ſ" for an s.
func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// badTransactionHeader rejects a message whose transactionEventCounter or
// transactionLastEvent is not the integer or boolean its column holds.
func badTransactionHeader(key string, value []byte, vt jsonparser.ValueType) error {
	want := "an integer"
	if key == "transactionLastEvent" {
		want = "true or false"
	}
	shown := truncate(string(value), 64)
	if vt == jsonparser.String {
		shown = strconv.Quote(shown)
	}
	return Rejectf(ReasonValueMismatch, "headers.%s is %s, want %s", key, shown, want)
}
