// Package gen writes reproducible synthetic GoldenGate Data Streams (or
// Qlik Replicate messages) for tests and benchmarks, and counts what it
// wrote so that a test can check the exporter's output row for row.
package gen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Options shape a generated stream.
type Options struct {
	Records int // DML records to write
	Tables  int // number of tables (default 4)
	Columns int // columns per table, at least 6 (default 12)
	// MaxColumns, when above Columns, gives each table between Columns
	// and MaxColumns columns.
	MaxColumns int
	Seed       uint64  // same seed, same stream
	NullRatio  float64 // share of nullable values written as null (default 0.1)
	// DDLEvery inserts an ALTER TABLE ... ADD column DDL for one table
	// (followed by its refreshed metadata) every N DML records; 0 = none.
	DDLEvery int
	// UpdateRatio and DeleteRatio split the op mix; the rest are inserts.
	UpdateRatio, DeleteRatio float64
	// Start is op_ts of the first record; records are Step apart
	// (default 10ms).
	Start time.Time
	Step  time.Duration
	// Track fills Stats.Expected.
	Track bool
	// Lines, when set, receives each line written (a copy).
	Lines *[][]byte
	// Format is FormatGoldenGate (the default) or FormatQlik.
	Format string
}

// The formats Write can produce.
const (
	FormatGoldenGate = "goldengate"
	// FormatQlik writes bare Qlik Replicate messages: a metadata message
	// per table, then data messages with every value a JSON string, as
	// Qlik sends them by default, and the deleted row in data.
	FormatQlik = "qlik"
)

// Expected is what the lake must hold for one DML record.
type Expected struct {
	Table string
	Op    string
	ID    int64
}

// Stats counts what a stream contains.
type Stats struct {
	DML        int
	ByTable    map[string]int
	ByTableOp  map[string]map[string]int
	DDL        int
	Bytes      int64
	TableNames []string
	Expected   map[string]Expected // by pos, when Options.Track
}

type table struct {
	name    string
	cols    []column
	nextID  int64
	live    []int64
	version int
}

type column struct {
	name     string
	kind     byte // i int, d decimal, s string, t timestamp, b boolean
	nullable bool
}

// Write writes the stream to w.
func Write(w io.Writer, o Options) (Stats, error) {
	if o.Tables <= 0 {
		o.Tables = 4
	}
	if o.Columns < 6 {
		o.Columns = 12
	}
	if o.NullRatio == 0 {
		o.NullRatio = 0.1
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 7, 13, 22, 0, 0, 0, time.UTC)
	}
	if o.Step <= 0 {
		o.Step = 10 * time.Millisecond
	}
	if o.UpdateRatio == 0 && o.DeleteRatio == 0 {
		o.UpdateRatio, o.DeleteRatio = 0.3, 0.1
	}
	qlik := false
	switch o.Format {
	case "", FormatGoldenGate:
	case FormatQlik:
		if o.DDLEvery > 0 {
			return Stats{}, errors.New("gen: DDL is written only in the GoldenGate format")
		}
		qlik = true
	default:
		return Stats{}, fmt.Errorf("gen: unknown format %q (want %s or %s)", o.Format, FormatGoldenGate, FormatQlik)
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	st := Stats{ByTable: map[string]int{}, ByTableOp: map[string]map[string]int{}}
	if o.Track {
		st.Expected = map[string]Expected{}
	}
	emit := func(b []byte) {
		cw.Write(b)
		if o.Lines != nil {
			// a buffer may hold several lines (DDL, schema, metadata)
			for _, l := range bytes.SplitAfter(b, []byte("\n")) {
				if len(l) > 1 {
					*o.Lines = append(*o.Lines, bytes.TrimSuffix(append([]byte(nil), l...), []byte("\n")))
				}
			}
		}
	}
	tables := make([]*table, o.Tables)
	var buf []byte
	for i := range tables {
		t := &table{name: "APP.T" + strconv.Itoa(i), nextID: 1}
		kinds := []byte{'i', 's', 'd', 't', 'b', 's'}
		ncols := o.Columns
		if o.MaxColumns > o.Columns {
			ncols += rng.IntN(o.MaxColumns - o.Columns + 1)
		}
		for c := 0; c < ncols; c++ {
			col := column{kind: kinds[c%len(kinds)], nullable: c > 0}
			if c == 0 {
				col.name = "ID"
			} else {
				col.name = "C" + strconv.Itoa(c) + "_" + string(col.kind)
			}
			t.cols = append(t.cols, col)
		}
		tables[i] = t
		st.TableNames = append(st.TableNames, t.name)
		st.ByTableOp[t.name] = map[string]int{}
		if qlik {
			buf = t.appendQlikMetadata(buf[:0], o.Start)
		} else {
			buf = t.appendSchema(buf[:0])
			buf = t.appendMetadata(buf)
		}
		emit(buf)
	}
	ts := o.Start
	for n := 0; n < o.Records; n++ {
		t := tables[rng.IntN(len(tables))]
		if o.DDLEvery > 0 && n > 0 && n%o.DDLEvery == 0 {
			buf = t.appendDDL(buf[:0], ts, n)
			st.DDL++
			emit(buf)
		}
		op := "INSERT"
		r := rng.Float64()
		if len(t.live) > 0 && r < o.DeleteRatio {
			op = "DELETE"
		} else if len(t.live) > 0 && r < o.DeleteRatio+o.UpdateRatio {
			op = "UPDATE"
		}
		var id int64
		if qlik {
			buf, id = t.appendQlikDML(buf[:0], rng, op, ts, n, o.NullRatio)
		} else {
			buf, id = t.appendDML(buf[:0], rng, op, ts, n, o.NullRatio)
		}
		emit(buf)
		if o.Track {
			st.Expected["P-"+strconv.Itoa(n)] = Expected{Table: t.name, Op: op, ID: id}
		}
		st.DML++
		st.ByTable[t.name]++
		st.ByTableOp[t.name][op]++
		ts = ts.Add(o.Step)
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	st.Bytes = cw.n
	return st, cw.err
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (t *table) appendSchema(b []byte) []byte {
	b = append(b, `{"$schema":"http://json-schema.org/draft-04/schema#","id":"`...)
	b = append(b, t.name...)
	b = append(b, `","type":"object","definitions":{"row":{"type":"object","properties":{`...)
	for i, c := range t.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, c.name)
		switch c.kind {
		case 'i':
			b = append(b, `:{"type":"integer"}`...)
		case 'd':
			b = append(b, `:{"type":["number","null"]}`...)
		case 't':
			b = append(b, `:{"type":["string","null"],"format":"date-time"}`...)
		case 'b':
			b = append(b, `:{"type":["boolean","null"]}`...)
		default:
			b = append(b, `:{"type":["string","null"]}`...)
		}
	}
	b = append(b, `}}},"properties":{"before":{"$ref":"#/definitions/row"},"after":{"$ref":"#/definitions/row"}}}`...)
	return append(b, '\n')
}

func (t *table) appendMetadata(b []byte) []byte {
	b = append(b, `{"op_type":"OBJECT_METADATA","qual_table":"`...)
	b = append(b, t.name...)
	b = append(b, `","columns":{`...)
	for i, c := range t.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, c.name)
		typ := "string"
		switch c.kind {
		case 'i', 'd':
			typ = "number"
		case 'b':
			typ = "boolean"
		}
		b = append(b, `:{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","null":`...)
		b = strconv.AppendBool(b, c.nullable)
		b = append(b, `,"key":`...)
		b = strconv.AppendBool(b, i == 0)
		b = append(b, '}')
	}
	return append(b, "}}\n"...)
}

func (t *table) appendDDL(b []byte, ts time.Time, n int) []byte {
	t.version++
	col := column{name: "ADDED_" + strconv.Itoa(t.version), kind: 's', nullable: true}
	t.cols = append(t.cols, col)
	b = append(b, `{"op_type":"DDL","op_ts":"`...)
	b = ts.AppendFormat(b, "2006-01-02T15:04:05.000000Z07:00")
	b = append(b, `","xid":"ddl-`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `","pos":"D-`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `","ddl":{"object":{"catalog":"","schema":"APP","object":"`...)
	b = append(b, t.name[4:]...)
	b = append(b, `"},"statement":"ALTER TABLE `...)
	b = append(b, t.name...)
	b = append(b, ` ADD `...)
	b = append(b, col.name...)
	b = append(b, " VARCHAR2(30)\"}}\n"...)
	b = t.appendSchema(b)
	return t.appendMetadata(b)
}

// rowID picks the row an op changes: a new one for an insert, a live one
// otherwise (a delete retires it).
func (t *table) rowID(rng *rand.Rand, op string) int64 {
	var id int64
	switch op {
	case "INSERT":
		id = t.nextID
		t.nextID++
		t.live = append(t.live, id)
	case "UPDATE":
		id = t.live[rng.IntN(len(t.live))]
	case "DELETE":
		i := rng.IntN(len(t.live))
		id = t.live[i]
		t.live[i] = t.live[len(t.live)-1]
		t.live = t.live[:len(t.live)-1]
	}
	return id
}

func (t *table) appendDML(b []byte, rng *rand.Rand, op string, ts time.Time, n int, nullRatio float64) ([]byte, int64) {
	id := t.rowID(rng, op)
	b = append(b, `{"qual_table":"`...)
	b = append(b, t.name...)
	b = append(b, `","op_type":"`...)
	b = append(b, op...)
	b = append(b, `","op_ts":"`...)
	b = ts.AppendFormat(b, "2006-01-02T15:04:05.000000Z07:00")
	b = append(b, `","xid":"tx-`...)
	b = strconv.AppendInt(b, int64(n/3), 10)
	b = append(b, `","pos":"P-`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '"')
	if op == "UPDATE" || op == "DELETE" {
		b = append(b, `,"before":`...)
		b = t.appendImage(b, rng, id, ts, nullRatio)
	}
	if op != "DELETE" {
		b = append(b, `,"after":`...)
		b = t.appendImage(b, rng, id, ts, nullRatio)
	}
	return append(b, "}\n"...), id
}

func (t *table) appendImage(b []byte, rng *rand.Rand, id int64, ts time.Time, nullRatio float64) []byte {
	return t.appendValues(b, rng, id, ts, nullRatio, false)
}

// appendValues writes a row image; quoted writes every value as a JSON
// string, as Qlik does (timestamps then without a zone).
func (t *table) appendValues(b []byte, rng *rand.Rand, id int64, ts time.Time, nullRatio float64, quoted bool) []byte {
	tsLayout, q := "2006-01-02T15:04:05.000000Z07:00", ""
	if quoted {
		tsLayout, q = "2006-01-02T15:04:05.000000", `"`
	}
	b = append(b, '{')
	for i, c := range t.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, c.name...)
		b = append(b, `":`...)
		if c.nullable && rng.Float64() < nullRatio {
			b = append(b, "null"...)
			continue
		}
		switch c.kind {
		case 'i':
			b = append(b, q...)
			b = strconv.AppendInt(b, id, 10)
			b = append(b, q...)
		case 'd':
			b = append(b, q...)
			b = strconv.AppendInt(b, rng.Int64N(1_000_000), 10)
			b = append(b, '.')
			cents := rng.IntN(100)
			b = append(b, byte('0'+cents/10), byte('0'+cents%10))
			b = append(b, q...)
		case 't':
			b = append(b, '"')
			b = ts.Add(-time.Duration(rng.IntN(86400))*time.Second).AppendFormat(b, tsLayout)
			b = append(b, '"')
		case 'b':
			b = append(b, q...)
			b = strconv.AppendBool(b, rng.IntN(2) == 0)
			b = append(b, q...)
		default:
			b = append(b, `"value `...)
			b = strconv.AppendInt(b, rng.Int64N(1<<40), 36)
			b = append(b, ` of `...)
			b = append(b, c.name...)
			b = append(b, '"')
		}
	}
	return append(b, '}')
}

// appendQlikMetadata writes the table's Qlik metadata message.
func (t *table) appendQlikMetadata(b []byte, ts time.Time) []byte {
	schema, name, _ := strings.Cut(t.name, ".")
	b = append(b, `{"lineage":{"class":"TABLE","type":"TABLE","schema":"`...)
	b = append(b, schema...)
	b = append(b, `","table":"`...)
	b = append(b, name...)
	b = append(b, `","tableVersion":1,"timestamp":"`...)
	b = ts.AppendFormat(b, "2006-01-02T15:04:05.000")
	b = append(b, `"},"tableStructure":{"tableColumns":{`...)
	for i, c := range t.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, c.name)
		typ, length := "STRING", 100
		switch c.kind {
		case 'i':
			typ, length = "INT8", 8
		case 'd':
			typ, length = "REAL8", 8
		case 't':
			typ, length = "DATETIME", 8
		case 'b':
			typ, length = "BOOLEAN", 1
		}
		b = append(b, `:{"ordinal":`...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `,"type":"`...)
		b = append(b, typ...)
		b = append(b, `","length":`...)
		b = strconv.AppendInt(b, int64(length), 10)
		b = append(b, `,"precision":0,"scale":0,"primaryKeyPosition":`...)
		b = strconv.AppendInt(b, int64(b2i(i == 0)), 10)
		b = append(b, `,"nullable":`...)
		b = strconv.AppendBool(b, c.nullable)
		b = append(b, '}')
	}
	return append(b, "}}}\n"...)
}

// appendQlikDML writes a Qlik data message: the row in data (the deleted
// row for a DELETE), the row before an UPDATE in beforeData.
func (t *table) appendQlikDML(b []byte, rng *rand.Rand, op string, ts time.Time, n int, nullRatio float64) ([]byte, int64) {
	id := t.rowID(rng, op)
	schema, name, _ := strings.Cut(t.name, ".")
	b = append(b, `{"schema":"`...)
	b = append(b, schema...)
	b = append(b, `","table":"`...)
	b = append(b, name...)
	b = append(b, `","data":`...)
	b = t.appendValues(b, rng, id, ts, nullRatio, true)
	b = append(b, `,"beforeData":`...)
	if op == "UPDATE" {
		b = t.appendValues(b, rng, id, ts, nullRatio, true)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"headers":{"operation":"`...)
	b = append(b, op...)
	b = append(b, `","changeSequence":"`...)
	b = fmt.Appendf(b, "%035d", n)
	b = append(b, `","timestamp":"`...)
	b = ts.AppendFormat(b, "2006-01-02T15:04:05.000000")
	b = append(b, `","streamPosition":"P-`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `","transactionId":"tx-`...)
	b = strconv.AppendInt(b, int64(n/3), 10)
	b = append(b, `","changeMask":"`...)
	b = appendAllColumnsMask(b, len(t.cols))
	b = append(b, `","columnMask":"`...)
	b = appendAllColumnsMask(b, len(t.cols))
	b = append(b, `","transactionEventCounter":`...)
	b = strconv.AppendInt(b, int64(n%3+1), 10)
	b = append(b, `,"transactionLastEvent":`...)
	b = strconv.AppendBool(b, n%3 == 2)
	return append(b, "}}\n"...), id
}

// appendAllColumnsMask writes the hexadecimal mask whose bits 0 to n-1
// (ordinals 1 to n) are set.
func appendAllColumnsMask(b []byte, n int) []byte {
	if r := n % 4; r > 0 {
		b = append(b, "137"[r-1])
	}
	for range n / 4 {
		b = append(b, 'F')
	}
	return b
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
