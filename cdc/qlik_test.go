package cdc_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

const qlikSamplePath = "../testdata/qlik/sample.jsonl"

// readQlikSample returns the lines of testdata/qlik/sample.jsonl.
func readQlikSample(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(qlikSamplePath)
	if err != nil {
		tb.Fatalf("open sample: %v", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read sample: %v", err)
	}
	return lines
}

func qlikOK(t *testing.T, d *cdc.Qlik, in string) *cdc.Record {
	t.Helper()
	var rec cdc.Record
	if err := d.Decode([]byte(in), &rec); err != nil {
		t.Fatalf("Decode(%s): %v", in, err)
	}
	if rec.Format != cdc.FormatQlik {
		t.Errorf("Decode(%s): Format = %v, want qlik", in, rec.Format)
	}
	return &rec
}

func qlikReject(t *testing.T, d *cdc.Qlik, in string, want cdc.Reason) {
	t.Helper()
	var rec cdc.Record
	err := d.Decode([]byte(in), &rec)
	if err == nil {
		t.Errorf("Decode(%s) = nil error, want reject %q (class %v, op %v, table %q)", in, want, rec.Class, rec.Op, rec.Table)
		return
	}
	var re *cdc.RejectError
	if !errors.As(err, &re) {
		t.Errorf("Decode(%s) error %v (%T) is not a *cdc.RejectError", in, err, err)
		return
	}
	if re.Reason != want {
		t.Errorf("Decode(%s) reason = %q (%v), want %q", in, re.Reason, re, want)
	}
	if re.Detail == "" {
		t.Errorf("Decode(%s): reject %q has no detail", in, re.Reason)
	}
}

// dt wraps a data message in the atMSG envelope, as the sample does.
func dt(msg string) string {
	return `{"magic":"atMSG","type":"DT","headers":null,"messageSchemaId":null,"messageSchema":null,"message":` + msg + `}`
}

// md wraps a metadata message in the atMSG envelope.
func md(msg string) string {
	return `{"magic":"atMSG","type":"MD","headers":null,"messageSchemaId":null,"messageSchema":null,"message":` + msg + `}`
}

// qmsg builds a data message of table S.T with the given headers and data.
func qmsg(headers, data string) string {
	return `{"schema":"S","table":"T","data":` + data + `,"beforeData":null,"headers":` + headers + `}`
}

// wantQlikHeaders compares the Qlik-only header fields.
func wantQlikHeaders(t *testing.T, what string, got, want cdc.QlikHeaders) {
	t.Helper()
	if got != want {
		t.Errorf("%s: Qlik headers\n got %+v\nwant %+v", what, got, want)
	}
}

func wantOrdinals(t *testing.T, what, mask string, want []int) {
	t.Helper()
	m, err := cdc.ParseMask(mask)
	if err != nil {
		t.Errorf("%s %q: %v", what, mask, err)
		return
	}
	if fmt.Sprint(m.Ordinals()) != fmt.Sprint(want) {
		t.Errorf("%s %q ordinals = %v, want %v", what, mask, m.Ordinals(), want)
	}
}

func strs(pairs ...string) []field {
	var out []field
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i+1] == "null" {
			out = append(out, field{pairs[i], "null", cdc.TypeNull})
		} else {
			out = append(out, field{pairs[i], pairs[i+1], cdc.TypeString})
		}
	}
	return out
}

// sampleColumns are the eight columns of SALES.CUSTOMERS, version 1.
var sampleColumns = []cdc.Column{
	{Name: "ID", Type: "number", Nullable: true, Key: true, NativeType: "INT4"},
	{Name: "NAME", Type: "string", Nullable: true, NativeType: "STRING(50)"},
	{Name: "BALANCE", Type: "number", Nullable: true, NativeType: "NUMERIC(12,2)"},
	{Name: "BIG", Type: "number", Nullable: true, NativeType: "UINT8"},
	{Name: "CREATED", Type: "string", Nullable: true, NativeType: "DATETIME"},
	{Name: "BIRTH", Type: "string", Nullable: true, NativeType: "DATE"},
	{Name: "ACTIVE", Type: "boolean", Nullable: true, NativeType: "BOOLEAN"},
	{Name: "NOTE", Type: "string", Nullable: true, NativeType: "CLOB"},
}

func wantColumns(t *testing.T, what string, got, want []cdc.Column) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d columns %+v, want %d %+v", what, len(got), got, len(want), want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: column %d = %+v, want %+v", what, i+1, got[i], want[i])
		}
	}
}

// TestQlikSample decodes every message of testdata/qlik/sample.jsonl and
// checks each field against the values written in the file.
func TestQlikSample(t *testing.T) {
	lines := readQlikSample(t)
	if len(lines) != 9 {
		t.Fatalf("sample has %d messages, want 9", len(lines))
	}
	d := cdc.NewQlik(cdc.QlikOptions{})

	t.Run("1 metadata v1", func(t *testing.T) {
		rec := qlikOK(t, d, lines[0])
		if rec.Class != cdc.ClassObjectMetadata || rec.Table != "SALES.CUSTOMERS" || rec.Metadata.Table != "SALES.CUSTOMERS" {
			t.Errorf("class %v table %q / %q", rec.Class, rec.Table, rec.Metadata.Table)
		}
		if rec.Metadata.Format != cdc.FormatQlik || rec.Metadata.SourceVersion != 1 || rec.Metadata.Inferred {
			t.Errorf("metadata format %v version %d inferred %v, want qlik 1 false", rec.Metadata.Format, rec.Metadata.SourceVersion, rec.Metadata.Inferred)
		}
		if !rec.Qlik.HasTableVersion || rec.Qlik.TableVersion != 1 {
			t.Errorf("Qlik table version %d (has %v), want 1", rec.Qlik.TableVersion, rec.Qlik.HasTableVersion)
		}
		if !rec.HasOpTS {
			t.Errorf("lineage.timestamp not read")
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 3, 0, 0, 0))
		wantColumns(t, "v1", rec.Metadata.Columns, sampleColumns)
		if rec.Op != 0 || rec.After.Present || rec.Before.Present {
			t.Errorf("metadata carries DML state: op %v", rec.Op)
		}
	})

	t.Run("2 refresh with empty CDC headers", func(t *testing.T) {
		rec := qlikOK(t, d, lines[1])
		if rec.Class != cdc.ClassDML || rec.Op != cdc.OpRefresh || rec.OpType != "REFRESH" || rec.Table != "SALES.CUSTOMERS" {
			t.Errorf("class %v op %v (%q) table %q", rec.Class, rec.Op, rec.OpType, rec.Table)
		}
		if rec.HasOpTS || rec.HasXID || rec.HasPos {
			t.Errorf("empty headers read as present: opts %v xid %v (%q) pos %v (%q)", rec.HasOpTS, rec.HasXID, rec.XID, rec.HasPos, rec.Pos)
		}
		wantQlikHeaders(t, "refresh", rec.Qlik, cdc.QlikHeaders{ColumnMask: "FF", HasEventCounter: true, EventCounter: 0, HasLastEvent: true, LastEvent: false})
		wantImage(t, "data", &rec.After, strs("ID", "1", "NAME", "Ada", "BALANCE", "100.50", "BIG", "18446744073709551615",
			"CREATED", "2026-07-01T10:00:00.123456", "BIRTH", "1815-12-10", "ACTIVE", "true", "NOTE", "first"))
		wantImage(t, "beforeData", &rec.Before, nil)
		if rec.RowImage() != &rec.After {
			t.Errorf("REFRESH row image is not data")
		}
	})

	t.Run("3 refresh with minimal headers", func(t *testing.T) {
		rec := qlikOK(t, d, lines[2])
		if rec.Op != cdc.OpRefresh || rec.HasOpTS || rec.HasPos || rec.HasXID {
			t.Errorf("op %v opts %v pos %v xid %v", rec.Op, rec.HasOpTS, rec.HasPos, rec.HasXID)
		}
		wantQlikHeaders(t, "refresh", rec.Qlik, cdc.QlikHeaders{ColumnMask: "FF"})
		wantImage(t, "data", &rec.After, strs("ID", "2", "NAME", "Grace", "BALANCE", "-7.25", "BIG", "0",
			"CREATED", "2026-07-02T11:30:00", "BIRTH", "1906-12-09", "ACTIVE", "false", "NOTE", "null"))
	})

	t.Run("4 bare insert", func(t *testing.T) {
		rec := qlikOK(t, d, lines[3])
		if rec.Class != cdc.ClassDML || rec.Op != cdc.OpInsert || rec.OpType != "INSERT" || rec.Table != "SALES.CUSTOMERS" {
			t.Errorf("class %v op %v (%q) table %q", rec.Class, rec.Op, rec.OpType, rec.Table)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 0, 0, 0))
		if !rec.HasOpTS || !rec.HasXID || rec.XID != "00000000000000000000000000060008" {
			t.Errorf("opts %v xid %v %q", rec.HasOpTS, rec.HasXID, rec.XID)
		}
		if !rec.HasPos || rec.Pos != "00000000.00bb2531.00000001.0000.02.0000:154.6963.16" {
			t.Errorf("pos %v %q, want the streamPosition", rec.HasPos, rec.Pos)
		}
		wantQlikHeaders(t, "insert", rec.Qlik, cdc.QlikHeaders{ChangeSeq: "20260713040000000000000000000000001",
			ChangeMask: "FF", ColumnMask: "FF", HasEventCounter: true, EventCounter: 1, HasLastEvent: true, LastEvent: true})
		if len(rec.After.Fields) != 8 || rec.After.Fields[1].Name != "NAME" || string(rec.After.Fields[1].Value) != "Edsger" {
			t.Errorf("data = %v", fieldsOf(&rec.After))
		}
		if string(rec.Body) != lines[3] {
			t.Errorf("Body of a bare message is not the message")
		}
	})

	t.Run("5 update with beforeData", func(t *testing.T) {
		rec := qlikOK(t, d, lines[4])
		if rec.Op != cdc.OpUpdate || rec.OpType != "UPDATE" {
			t.Errorf("op %v (%q)", rec.Op, rec.OpType)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 1, 0, 0))
		if rec.Pos != "00000000.00bb2531.00000001.0000.02.0000:154.6963.17" || rec.XID != "00000000000000000000000000060009" {
			t.Errorf("pos %q xid %q", rec.Pos, rec.XID)
		}
		wantQlikHeaders(t, "update", rec.Qlik, cdc.QlikHeaders{ChangeSeq: "20260713040100000000000000000000002",
			ChangeMask: "06", ColumnMask: "FF", HasEventCounter: true, EventCounter: 1, HasLastEvent: true, LastEvent: false})
		wantImage(t, "beforeData", &rec.Before, strs("ID", "1", "NAME", "Ada", "BALANCE", "100.50", "BIG", "18446744073709551615",
			"CREATED", "2026-07-01T10:00:00.123456", "BIRTH", "1815-12-10", "ACTIVE", "true", "NOTE", "first"))
		wantImage(t, "data", &rec.After, strs("ID", "1", "NAME", "Ada L.", "BALANCE", "120.00", "BIG", "18446744073709551615",
			"CREATED", "2026-07-01T10:00:00.123456", "BIRTH", "1815-12-10", "ACTIVE", "true", "NOTE", "first"))
		if rec.RowImage() != &rec.After {
			t.Errorf("UPDATE row image is not data")
		}
		// 06 = 0110: ordinals 2 and 3, NAME and BALANCE, the two that differ.
		wantOrdinals(t, "changeMask", rec.Qlik.ChangeMask, []int{2, 3})
		var changed []int
		for i := range rec.After.Fields {
			if string(rec.After.Fields[i].Value) != string(rec.Before.Fields[i].Value) {
				changed = append(changed, i+1)
			}
		}
		if fmt.Sprint(changed) != "[2 3]" {
			t.Errorf("changed columns %v, want [2 3]", changed)
		}
		if !strings.HasPrefix(string(rec.Body), `{"schema":"SALES"`) {
			t.Errorf("Body of an envelope is not its message: %.40s", rec.Body)
		}
	})

	t.Run("6 update without beforeData", func(t *testing.T) {
		rec := qlikOK(t, d, lines[5])
		if rec.Op != cdc.OpUpdate || rec.Before.Present || !rec.After.Present {
			t.Errorf("op %v before %v after %v", rec.Op, rec.Before.Present, rec.After.Present)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 2, 0, 0))
		wantQlikHeaders(t, "update", rec.Qlik, cdc.QlikHeaders{ChangeSeq: "20260713040200000000000000000000003",
			ChangeMask: "42", ColumnMask: "7F", HasEventCounter: true, EventCounter: 2, HasLastEvent: true, LastEvent: true})
		// 42 = 0100 0010: NAME (2) and ACTIVE (7); 7F: all but NOTE (8).
		wantOrdinals(t, "changeMask", rec.Qlik.ChangeMask, []int{2, 7})
		wantOrdinals(t, "columnMask", rec.Qlik.ColumnMask, seq(1, 7))
	})

	t.Run("7 delete with data only", func(t *testing.T) {
		rec := qlikOK(t, d, lines[6])
		if rec.Op != cdc.OpDelete || rec.OpType != "DELETE" {
			t.Errorf("op %v (%q)", rec.Op, rec.OpType)
		}
		if rec.XID != "0000000000000000000000000006000A" || rec.Pos != "00000000.00bb2531.00000001.0000.02.0000:154.6963.19" {
			t.Errorf("xid %q pos %q", rec.XID, rec.Pos)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 3, 0, 0))
		if rec.RowImage() != &rec.After {
			t.Fatalf("DELETE with data only does not use data as its row")
		}
		wantImage(t, "row", rec.RowImage(), strs("ID", "2", "NAME", "null", "BALANCE", "null", "BIG", "null",
			"CREATED", "null", "BIRTH", "null", "ACTIVE", "null", "NOTE", "null"))
		wantOrdinals(t, "changeMask", rec.Qlik.ChangeMask, []int{1})
	})

	t.Run("8 metadata v2", func(t *testing.T) {
		rec := qlikOK(t, d, lines[7])
		want := append(append([]cdc.Column(nil), sampleColumns...), cdc.Column{Name: "TIER", Type: "string", Nullable: true, NativeType: "STRING(10)"})
		wantColumns(t, "v2", rec.Metadata.Columns, want)
		if rec.Metadata.SourceVersion != 2 || rec.Qlik.TableVersion != 2 {
			t.Errorf("version %d / %d, want 2", rec.Metadata.SourceVersion, rec.Qlik.TableVersion)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 5, 0, 0, 0))
	})

	t.Run("9 insert with nine columns", func(t *testing.T) {
		rec := qlikOK(t, d, lines[8])
		if rec.Op != cdc.OpInsert || len(rec.After.Fields) != 9 || rec.After.Fields[8].Name != "TIER" || string(rec.After.Fields[8].Value) != "GOLD" {
			t.Errorf("op %v data %v", rec.Op, fieldsOf(&rec.After))
		}
		wantOrdinals(t, "changeMask", rec.Qlik.ChangeMask, seq(1, 9))
		wantOrdinals(t, "columnMask", rec.Qlik.ColumnMask, seq(1, 9))
	})
}

func TestQlikOperations(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	ts := `"timestamp":"2026-07-13T04:00:00"`
	for _, c := range []struct {
		op   string
		want cdc.Op
	}{{"REFRESH", cdc.OpRefresh}, {"INSERT", cdc.OpInsert}, {"UPDATE", cdc.OpUpdate}, {"DELETE", cdc.OpDelete}} {
		for _, shape := range []string{"bare", "envelope"} {
			in := qmsg(`{"operation":"`+c.op+`",`+ts+`}`, `{"A":"1"}`)
			if shape == "envelope" {
				in = dt(in)
			}
			rec := qlikOK(t, d, in)
			if rec.Class != cdc.ClassDML || rec.Op != c.want || rec.OpType != c.op || rec.Table != "S.T" {
				t.Errorf("%s %s: class %v op %v (%q) table %q", shape, c.op, rec.Class, rec.Op, rec.OpType, rec.Table)
			}
			if rec.Op.String() != c.op {
				t.Errorf("%v.String() = %q, want %q", rec.Op, rec.Op.String(), c.op)
			}
			if !rec.HasOpTS {
				t.Errorf("%s %s: timestamp not read", shape, c.op)
			}
			wantTime(t, c.op+" OpTS", rec.OpTS, utc(2026, 7, 13, 4, 0, 0, 0))
			wantImage(t, c.op+" row", rec.RowImage(), strs("A", "1"))
		}
	}
}

func TestQlikHeaderFields(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	const ts = `"timestamp":"2026-07-13T04:00:00.000"`
	cases := []struct {
		name      string
		headers   string
		q         cdc.QlikHeaders
		pos       string // "" = no pos
		xid       string // "" = no xid
		opts      time.Time
		checkOpTS bool
		hasNoOpTS bool
	}{
		{name: "event counter as number", headers: `{"operation":"INSERT",` + ts + `,"transactionEventCounter":7}`,
			q: cdc.QlikHeaders{HasEventCounter: true, EventCounter: 7}},
		{name: "event counter as string", headers: `{"operation":"INSERT",` + ts + `,"transactionEventCounter":"7"}`,
			q: cdc.QlikHeaders{HasEventCounter: true, EventCounter: 7}},
		{name: "event counter zero", headers: `{"operation":"INSERT",` + ts + `,"transactionEventCounter":0}`,
			q: cdc.QlikHeaders{HasEventCounter: true}},
		{name: "event counter large", headers: `{"operation":"INSERT",` + ts + `,"transactionEventCounter":9007199254740993}`,
			q: cdc.QlikHeaders{HasEventCounter: true, EventCounter: 9007199254740993}},
		{name: "event counter empty string", headers: `{"operation":"INSERT",` + ts + `,"transactionEventCounter":""}`},
		{name: "event counter escaped", headers: `{"operation":"INSERT",` + ts + `,"transactionEventCounter":"\u0031\u0032","transactionLastEvent":"\u0074rue"}`,
			q: cdc.QlikHeaders{HasEventCounter: true, EventCounter: 12, HasLastEvent: true, LastEvent: true}},
		{name: "event counter null", headers: `{"operation":"INSERT",` + ts + `,"transactionEventCounter":null}`},
		{name: "last event true", headers: `{"operation":"INSERT",` + ts + `,"transactionLastEvent":true}`,
			q: cdc.QlikHeaders{HasLastEvent: true, LastEvent: true}},
		{name: "last event false", headers: `{"operation":"INSERT",` + ts + `,"transactionLastEvent":false}`,
			q: cdc.QlikHeaders{HasLastEvent: true}},
		{name: "last event \"True\"", headers: `{"operation":"INSERT",` + ts + `,"transactionLastEvent":"True"}`,
			q: cdc.QlikHeaders{HasLastEvent: true, LastEvent: true}},
		{name: "last event \"False\"", headers: `{"operation":"INSERT",` + ts + `,"transactionLastEvent":"False"}`,
			q: cdc.QlikHeaders{HasLastEvent: true}},
		{name: "last event empty", headers: `{"operation":"INSERT",` + ts + `,"transactionLastEvent":""}`},
		{name: "last event null", headers: `{"operation":"INSERT",` + ts + `,"transactionLastEvent":null}`},
		{name: "masks", headers: `{"operation":"UPDATE",` + ts + `,"changeMask":"0B","columnMask":"1ff"}`,
			q: cdc.QlikHeaders{ChangeMask: "0B", ColumnMask: "1ff"}},
		{name: "stream position wins over change sequence",
			headers: `{"operation":"INSERT",` + ts + `,"changeSequence":"20260713040000000000000000000000001","streamPosition":"0000.0001:1.2.3"}`,
			q:       cdc.QlikHeaders{ChangeSeq: "20260713040000000000000000000000001"}, pos: "0000.0001:1.2.3"},
		{name: "stream position listed first",
			headers: `{"streamPosition":"0000.0001:1.2.3","changeSequence":"20260713040000000000000000000000001","operation":"INSERT",` + ts + `}`,
			q:       cdc.QlikHeaders{ChangeSeq: "20260713040000000000000000000000001"}, pos: "0000.0001:1.2.3"},
		{name: "positions sent as numbers are kept as their text",
			headers: `{"operation":"INSERT",` + ts + `,"changeSequence":20260713040000000000000000000000009,"streamPosition":12345}`,
			q:       cdc.QlikHeaders{ChangeSeq: "20260713040000000000000000000000009"}, pos: "12345"},
		{name: "change sequence when there is no stream position",
			headers: `{"operation":"INSERT",` + ts + `,"changeSequence":"20260713040000000000000000000000009"}`,
			q:       cdc.QlikHeaders{ChangeSeq: "20260713040000000000000000000000009"}, pos: "20260713040000000000000000000000009"},
		{name: "change sequence when the stream position is empty",
			headers: `{"operation":"INSERT",` + ts + `,"changeSequence":"20260713040000000000000000000000009","streamPosition":""}`,
			q:       cdc.QlikHeaders{ChangeSeq: "20260713040000000000000000000000009"}, pos: "20260713040000000000000000000000009"},
		{name: "change sequence when the stream position is null",
			headers: `{"operation":"INSERT",` + ts + `,"changeSequence":"42","streamPosition":null}`,
			q:       cdc.QlikHeaders{ChangeSeq: "42"}, pos: "42"},
		{name: "transaction id", headers: `{"operation":"INSERT",` + ts + `,"transactionId":"0000000000000000000000000006000A"}`,
			xid: "0000000000000000000000000006000A"},
		{name: "transaction id null", headers: `{"operation":"INSERT",` + ts + `,"transactionId":null}`},
		{name: "escaped position", headers: `{"operation":"INSERT",` + ts + `,"streamPosition":"a\/b\u0020c"}`, pos: "a/b c"},
		{name: "timestamp with microseconds", headers: `{"operation":"INSERT","timestamp":"2026-07-13T04:00:00.123456"}`,
			opts: utc(2026, 7, 13, 4, 0, 0, 123456000), checkOpTS: true},
		{name: "timestamp with a space", headers: `{"operation":"INSERT","timestamp":"2026-07-13 04:00:00"}`,
			opts: utc(2026, 7, 13, 4, 0, 0, 0), checkOpTS: true},
		{name: "timestamp with a zone", headers: `{"operation":"INSERT","timestamp":"2026-07-13T04:00:00.5+02:00"}`,
			opts: utc(2026, 7, 13, 2, 0, 0, 500000000), checkOpTS: true},
		{name: "timestamp with Z", headers: `{"operation":"INSERT","timestamp":"2026-07-13T04:00:00Z"}`,
			opts: utc(2026, 7, 13, 4, 0, 0, 0), checkOpTS: true},
		{name: "refresh with every CDC header empty",
			headers:   `{"operation":"REFRESH","changeSequence":"","timestamp":"","streamPosition":"","transactionId":"","changeMask":"","columnMask":"","transactionEventCounter":"","transactionLastEvent":""}`,
			hasNoOpTS: true},
		{name: "refresh with null CDC headers",
			headers:   `{"operation":"REFRESH","changeSequence":null,"timestamp":null,"streamPosition":null,"transactionId":null,"changeMask":null,"columnMask":null}`,
			hasNoOpTS: true},
		{name: "refresh with a timestamp", headers: `{"operation":"REFRESH","timestamp":"2026-07-13T03:00:00"}`,
			opts: utc(2026, 7, 13, 3, 0, 0, 0), checkOpTS: true},
		{name: "unknown headers are ignored", headers: `{"operation":"INSERT",` + ts + `,"somethingNew":{"a":[1,2]},"other":1}`},
	}
	for _, c := range cases {
		for _, shape := range []string{"bare", "envelope"} {
			in := qmsg(c.headers, `{"A":"1"}`)
			if shape == "envelope" {
				in = dt(in)
			}
			var rec cdc.Record
			if err := d.Decode([]byte(in), &rec); err != nil {
				t.Errorf("%s (%s): %v", c.name, shape, err)
				continue
			}
			what := c.name + " (" + shape + ")"
			wantQlikHeaders(t, what, rec.Qlik, c.q)
			if rec.HasPos != (c.pos != "") || rec.Pos != c.pos {
				t.Errorf("%s: pos %v %q, want %q", what, rec.HasPos, rec.Pos, c.pos)
			}
			if rec.HasXID != (c.xid != "") || rec.XID != c.xid {
				t.Errorf("%s: xid %v %q, want %q", what, rec.HasXID, rec.XID, c.xid)
			}
			if c.hasNoOpTS && (rec.HasOpTS || !rec.OpTS.IsZero()) {
				t.Errorf("%s: OpTS %v (has %v), want none", what, rec.OpTS, rec.HasOpTS)
			}
			if !c.hasNoOpTS && !rec.HasOpTS {
				t.Errorf("%s: no OpTS", what)
			}
			if c.checkOpTS {
				wantTime(t, what+" OpTS", rec.OpTS, c.opts)
			}
		}
	}
}

// TestQlikTimestampRequired: the reference calls timestamp "applicable to
// CDC operations only", so full-load REFRESH rows may lack it; every CDC
// operation must have one.
func TestQlikTimestampRequired(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	rec := qlikOK(t, d, qmsg(`{"operation":"REFRESH"}`, `{"A":"1"}`))
	if rec.HasOpTS || !rec.OpTS.IsZero() {
		t.Errorf("REFRESH without timestamp: HasOpTS %v OpTS %v", rec.HasOpTS, rec.OpTS)
	}
	for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
		for _, h := range []string{
			`{"operation":"` + op + `"}`,
			`{"operation":"` + op + `","timestamp":""}`,
			`{"operation":"` + op + `","timestamp":null}`,
			`{"operation":"` + op + `","timestamp":1720843200}`,
		} {
			qlikReject(t, d, qmsg(h, `{"A":"1"}`), cdc.ReasonBadOpTS)
			qlikReject(t, d, dt(qmsg(h, `{"A":"1"}`)), cdc.ReasonBadOpTS)
		}
	}
	for _, op := range []string{"REFRESH", "INSERT", "UPDATE", "DELETE"} {
		for _, bad := range []string{"yesterday", "2026-13-01T00:00:00", "2026-02-30T00:00:00", "2026-07-13T04:00:00+25:00", "2026-07-13"} {
			qlikReject(t, d, qmsg(`{"operation":"`+op+`","timestamp":"`+bad+`"}`, `{"A":"1"}`), cdc.ReasonBadOpTS)
		}
	}
}

func TestQlikTableName(t *testing.T) {
	const h = `"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00"}`
	const h2 = `"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","schema":"HS","table":"HT"}`
	const data = `"data":{"A":"1"}`
	cases := []struct {
		name string
		def  string
		in   string
		want string // "" = bad_table_name
	}{
		{"message schema and table", "", `{"schema":"S","table":"T",` + data + `,` + h + `}`, "S.T"},
		{"message table only", "", `{"table":"T",` + data + `,` + h + `}`, "T"},
		{"message table with empty schema", "", `{"schema":"","table":"T",` + data + `,` + h + `}`, "T"},
		{"headers schema and table", "", `{` + data + `,` + h2 + `}`, "HS.HT"},
		{"message beats headers", "", `{"schema":"S","table":"T",` + data + `,` + h2 + `}`, "S.T"},
		{"message beats default", "D.X", `{"schema":"S","table":"T",` + data + `,` + h + `}`, "S.T"},
		{"headers beat default", "D.X", `{` + data + `,` + h2 + `}`, "HS.HT"},
		{"default", "D.X", `{` + data + `,` + h + `}`, "D.X"},
		{"default when table is empty", "D.X", `{"schema":"S","table":"",` + data + `,` + h + `}`, "D.X"},
		{"default when table is null", "D.X", `{"schema":"S","table":null,` + data + `,` + h + `}`, "D.X"},
		{"no table", "", `{` + data + `,` + h + `}`, ""},
		{"schema without table", "", `{"schema":"S",` + data + `,` + h + `}`, ""},
		{"empty table", "", `{"schema":"S","table":"",` + data + `,` + h + `}`, ""},
		{"table is a number", "", `{"table":5,` + data + `,` + h + `}`, ""},
		{"table only inside data", "", `{"data":{"table":"X","schema":"Y"},` + h + `}`, ""},
		// a dot inside a part is quoted, so that these two are two tables
		{"dotted schema", "", `{"schema":"A.B","table":"C",` + data + `,` + h + `}`, `"A.B".C`},
		{"dotted table", "", `{"schema":"A","table":"B.C",` + data + `,` + h + `}`, `A."B.C"`},
		{"quote in a name", "", `{"schema":"A\"B","table":"T",` + data + `,` + h + `}`, `"A""B".T`},
	}
	for _, c := range cases {
		d := cdc.NewQlik(cdc.QlikOptions{DefaultTable: c.def})
		for _, in := range []string{c.in, dt(c.in)} {
			if c.want == "" {
				qlikReject(t, d, in, cdc.ReasonBadTableName)
				continue
			}
			var rec cdc.Record
			if err := d.Decode([]byte(in), &rec); err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if rec.Table != c.want {
				t.Errorf("%s: table %q, want %q", c.name, rec.Table, c.want)
			}
		}
	}
}

func TestQlikRowImages(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	hdr := func(op string) string { return `{"operation":"` + op + `","timestamp":"2026-07-13T04:00:00"}` }
	msg := func(op, data, before string) string {
		return `{"schema":"S","table":"T","data":` + data + `,"beforeData":` + before + `,"headers":` + hdr(op) + `}`
	}

	// DELETE: data only, then beforeData only, then both.
	rec := qlikOK(t, d, msg("DELETE", `{"ID":"7","N":null}`, `null`))
	if rec.RowImage() != &rec.After {
		t.Errorf("DELETE with data only: row image is not data")
	}
	wantImage(t, "delete row", rec.RowImage(), strs("ID", "7", "N", "null"))

	rec = qlikOK(t, d, msg("DELETE", `null`, `{"ID":"8"}`))
	if rec.RowImage() != &rec.Before {
		t.Errorf("DELETE with beforeData only: row image is not beforeData")
	}
	wantImage(t, "delete row", rec.RowImage(), strs("ID", "8"))

	rec = qlikOK(t, d, msg("DELETE", `{"ID":"9","N":"after"}`, `{"ID":"9","N":"before"}`))
	if rec.RowImage() != &rec.Before {
		t.Errorf("DELETE with both images: row image is not beforeData")
	}
	wantImage(t, "delete row", rec.RowImage(), strs("ID", "9", "N", "before"))

	// beforeData key absent altogether
	rec = qlikOK(t, d, `{"table":"T","data":{"ID":"1"},"headers":`+hdr("DELETE")+`}`)
	if rec.RowImage() != &rec.After || rec.Before.Present {
		t.Errorf("DELETE without beforeData key: row image is not data")
	}

	// Value types in document order.
	rec = qlikOK(t, d, msg("INSERT", `{"S":"x\"y","N":12.50,"B":true,"Z":null,"O":{"k":1},"L":[1]}`, `null`))
	wantImage(t, "insert", &rec.After, []field{
		{"S", `x\"y`, cdc.TypeString}, {"N", "12.50", cdc.TypeNumber}, {"B", "true", cdc.TypeBool},
		{"Z", "null", cdc.TypeNull}, {"O", `{"k":1}`, cdc.TypeObject}, {"L", "[1]", cdc.TypeArray},
	})
	txt, err := rec.After.Fields[0].Text(nil)
	if err != nil || string(txt) != `x"y` {
		t.Errorf("Text of an escaped string = %q, %v", txt, err)
	}

	// An empty data object is present.
	rec = qlikOK(t, d, msg("INSERT", `{}`, `null`))
	if !rec.After.Present || len(rec.After.Fields) != 0 {
		t.Errorf("empty data: present %v fields %v", rec.After.Present, fieldsOf(&rec.After))
	}

	// The row image must be there.
	for _, in := range []string{
		msg("INSERT", `null`, `null`),
		msg("UPDATE", `null`, `{"ID":"1"}`),
		msg("REFRESH", `null`, `null`),
		msg("DELETE", `null`, `null`),
		`{"table":"T","headers":` + hdr("INSERT") + `}`,
		`{"table":"T","headers":` + hdr("DELETE") + `}`,
	} {
		qlikReject(t, d, in, cdc.ReasonMissingImage)
	}
	// Images that are not objects.
	for _, v := range []string{`[]`, `"x"`, `1`, `true`, `[{"A":"1"}]`} {
		qlikReject(t, d, msg("INSERT", v, `null`), cdc.ReasonMalformedJSON)
		qlikReject(t, d, dt(msg("INSERT", v, `null`)), cdc.ReasonMalformedJSON)
		qlikReject(t, d, msg("UPDATE", `{"A":"1"}`, v), cdc.ReasonMalformedJSON)
	}
}

func TestQlikMetadata(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	// Keys in an order unrelated to the ordinals.
	msg := `{"lineage":{"class":"TABLE","type":"TABLE","schema":"APP","table":"ACCOUNTS","tableVersion":"3","timestamp":"2026-07-13T06:07:08.250"},
"tableStructure":{"tableColumns":{
"Z_LAST":{"ordinal":6,"type":"uint8","length":8,"precision":0,"scale":0,"primaryKeyPosition":0},
"AMOUNT":{"ordinal":3,"type":"NUMERIC","length":0,"precision":12,"scale":2,"primaryKeyPosition":0,"nullable":true},
"TENANT":{"ordinal":2,"type":"INT4","length":4,"precision":0,"scale":0,"primaryKeyPosition":1,"nullable":false},
"ID":{"ordinal":1,"type":"INT8","length":8,"precision":0,"scale":0,"primaryKeyPosition":2,"nullable":false},
"LABEL":{"ordinal":5,"type":"STRING","length":50,"precision":0,"scale":0,"primaryKeyPosition":0},
"FLAG":{"ordinal":4,"type":"BOOLEAN","length":0,"precision":0,"scale":0,"primaryKeyPosition":0},
"WIDE":{"ordinal":7,"type":"WSTRING","length":20},
"RAW":{"ordinal":8,"type":"BYTES","length":16},
"RATE":{"ordinal":9,"type":"REAL8"},
"TXT":{"ordinal":10,"type":"STRING","length":0},
"N0":{"ordinal":11,"type":"NUMERIC","precision":38,"scale":0}
}}}`
	want := []cdc.Column{
		{Name: "ID", Type: "number", Nullable: false, Key: true, NativeType: "INT8"},
		{Name: "TENANT", Type: "number", Nullable: false, Key: true, NativeType: "INT4"},
		{Name: "AMOUNT", Type: "number", Nullable: true, NativeType: "NUMERIC(12,2)"},
		{Name: "FLAG", Type: "boolean", Nullable: true, NativeType: "BOOLEAN"},
		{Name: "LABEL", Type: "string", Nullable: true, NativeType: "STRING(50)"},
		{Name: "Z_LAST", Type: "number", Nullable: true, NativeType: "UINT8"},
		{Name: "WIDE", Type: "string", Nullable: true, NativeType: "WSTRING(20)"},
		{Name: "RAW", Type: "string", Nullable: true, NativeType: "BYTES(16)"},
		{Name: "RATE", Type: "number", Nullable: true, NativeType: "REAL8"},
		{Name: "TXT", Type: "string", Nullable: true, NativeType: "STRING"},
		{Name: "N0", Type: "number", Nullable: true, NativeType: "NUMERIC(38,0)"},
	}
	for _, in := range []string{msg, md(msg)} {
		rec := qlikOK(t, d, in)
		if rec.Class != cdc.ClassObjectMetadata || rec.Table != "APP.ACCOUNTS" || rec.Metadata.Table != "APP.ACCOUNTS" {
			t.Errorf("class %v table %q / %q", rec.Class, rec.Table, rec.Metadata.Table)
		}
		if rec.Metadata.Format != cdc.FormatQlik || rec.Metadata.SourceVersion != 3 || !rec.Qlik.HasTableVersion || rec.Qlik.TableVersion != 3 {
			t.Errorf("format %v version %d / %d", rec.Metadata.Format, rec.Metadata.SourceVersion, rec.Qlik.TableVersion)
		}
		if !rec.HasOpTS {
			t.Errorf("no OpTS from lineage.timestamp")
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 6, 7, 8, 250000000))
		wantColumns(t, "metadata", rec.Metadata.Columns, want)
		if string(rec.Body) != msg {
			t.Errorf("Body is not the metadata message")
		}
	}

	// Run the same columns through many key orders: the result never
	// depends on the order of the JSON object.
	names := []string{"A", "B", "C", "D", "E"}
	for rot := 0; rot < len(names); rot++ {
		var parts []string
		for i := range names {
			j := (i + rot) % len(names)
			parts = append(parts, fmt.Sprintf(`"%s":{"ordinal":%d,"type":"INT4"}`, names[len(names)-1-j], len(names)-j))
		}
		in := `{"lineage":{"schema":"S","table":"T"},"tableStructure":{"tableColumns":{` + strings.Join(parts, ",") + `}}}`
		rec := qlikOK(t, d, in)
		var got []string
		for _, c := range rec.Metadata.Columns {
			got = append(got, c.Name)
		}
		if strings.Join(got, "") != "ABCDE" {
			t.Errorf("columns of %s in order %v, want A..E", in, got)
		}
		if rec.HasOpTS || rec.Qlik.HasTableVersion || rec.Metadata.SourceVersion != 0 {
			t.Errorf("no timestamp and version given, got OpTS %v version %d", rec.HasOpTS, rec.Metadata.SourceVersion)
		}
	}
}

func TestQlikMetadataVersionAndTable(t *testing.T) {
	cols := `"tableStructure":{"tableColumns":{"A":{"ordinal":1,"type":"INT4"}}}`
	d := cdc.NewQlik(cdc.QlikOptions{})
	for _, c := range []struct {
		tv      string
		has     bool
		version int64
	}{
		{`1`, true, 1},
		{`"12"`, true, 12},
		{`0`, true, 0},
		{`null`, false, 0},
		{`""`, false, 0},
	} {
		in := `{"lineage":{"schema":"S","table":"T","tableVersion":` + c.tv + `},` + cols + `}`
		var rec cdc.Record
		if err := d.Decode([]byte(in), &rec); err != nil {
			t.Errorf("tableVersion %s: %v", c.tv, err)
			continue
		}
		if rec.Qlik.HasTableVersion != c.has || rec.Qlik.TableVersion != c.version || rec.Metadata.SourceVersion != c.version {
			t.Errorf("tableVersion %s: has %v version %d / %d, want %v %d", c.tv, rec.Qlik.HasTableVersion, rec.Qlik.TableVersion, rec.Metadata.SourceVersion, c.has, c.version)
		}
	}
	for _, tv := range []string{`"abc"`, `1.5`, `true`, `{}`, `"1e3"`} {
		qlikReject(t, d, `{"lineage":{"schema":"S","table":"T","tableVersion":`+tv+`},`+cols+`}`, cdc.ReasonBadMetadata)
	}

	// The table: lineage, else the configured default, else a reject.
	qlikReject(t, d, `{"lineage":{"tableVersion":1},`+cols+`}`, cdc.ReasonBadTableName)
	qlikReject(t, d, md(`{`+cols+`}`), cdc.ReasonBadTableName)
	rec := qlikOK(t, d, `{"lineage":{"table":"ONLY"},`+cols+`}`)
	if rec.Table != "ONLY" {
		t.Errorf("table %q, want ONLY", rec.Table)
	}
	dd := cdc.NewQlik(cdc.QlikOptions{DefaultTable: "D.X"})
	rec = qlikOK(t, dd, `{"lineage":{"tableVersion":1},`+cols+`}`)
	if rec.Table != "D.X" || rec.Metadata.Table != "D.X" {
		t.Errorf("table %q / %q, want the default D.X", rec.Table, rec.Metadata.Table)
	}
	rec = qlikOK(t, dd, `{"lineage":{"schema":"S","table":"T"},`+cols+`}`)
	if rec.Table != "S.T" {
		t.Errorf("table %q, want S.T over the default", rec.Table)
	}
}

func TestQlikMetadataRejects(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	wrap := func(cols string) string {
		return `{"lineage":{"schema":"S","table":"T","tableVersion":1},"tableStructure":{"tableColumns":` + cols + `}}`
	}
	for _, c := range []struct {
		name, cols string
	}{
		{"duplicate ordinal", `{"A":{"ordinal":1,"type":"INT4"},"B":{"ordinal":1,"type":"INT4"}}`},
		{"duplicate ordinal later", `{"A":{"ordinal":1},"B":{"ordinal":2},"C":{"ordinal":2}}`},
		{"missing ordinal", `{"A":{"ordinal":1,"type":"INT4"},"B":{"type":"INT4"}}`},
		{"null ordinal", `{"A":{"ordinal":null,"type":"INT4"}}`},
		{"zero ordinal", `{"A":{"ordinal":0,"type":"INT4"}}`},
		{"negative ordinal", `{"A":{"ordinal":-1,"type":"INT4"},"B":{"ordinal":1,"type":"INT4"}}`},
		{"gap", `{"A":{"ordinal":1,"type":"INT4"},"B":{"ordinal":3,"type":"INT4"}}`},
		{"not starting at 1", `{"A":{"ordinal":2,"type":"INT4"}}`},
		{"huge ordinal", `{"A":{"ordinal":1,"type":"INT4"},"B":{"ordinal":1000000000}}`},
		{"ordinal as string", `{"A":{"ordinal":"1","type":"INT4"}}`},
		{"ordinal fractional", `{"A":{"ordinal":1.5,"type":"INT4"}}`},
		{"column not an object", `{"A":5}`},
		{"no columns", `{}`},
		{"columns null", `null`},
		{"columns an array", `[{"ordinal":1}]`},
	} {
		qlikReject(t, d, wrap(c.cols), cdc.ReasonBadMetadata)
		qlikReject(t, d, md(wrap(c.cols)), cdc.ReasonBadMetadata)
	}
	qlikReject(t, d, `{"lineage":{"schema":"S","table":"T"}}`, cdc.ReasonBadMetadata)
	qlikReject(t, d, `{"lineage":{"schema":"S","table":"T"},"tableStructure":{}}`, cdc.ReasonBadMetadata)
	qlikReject(t, d, `{"lineage":"S.T","tableStructure":{"tableColumns":{"A":{"ordinal":1}}}}`, cdc.ReasonBadMetadata)
}

// TestQlikMetadataKeptAcrossReuse: a consumer may keep the columns of a
// metadata record while the Record is reused.
func TestQlikMetadataKeptAcrossReuse(t *testing.T) {
	lines := readQlikSample(t)
	d := cdc.NewQlik(cdc.QlikOptions{})
	var rec cdc.Record
	if err := d.Decode([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	kept := rec.Metadata
	for _, l := range lines[1:] {
		if err := d.Decode([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
	}
	if rec.Metadata.SourceVersion != 0 || len(rec.Metadata.Columns) != 0 {
		t.Errorf("data record carries metadata: %+v", rec.Metadata)
	}
	wantColumns(t, "kept v1", kept.Columns, sampleColumns)
	if kept.SourceVersion != 1 {
		t.Errorf("kept version %d, want 1", kept.SourceVersion)
	}
}

func TestQlikRejects(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	good := qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00"}`, `{"A":"1"}`)
	cases := []struct {
		name string
		in   string
		want cdc.Reason
	}{
		// envelope
		{"bad magic", `{"magic":"atMsg","type":"DT","message":` + good + `}`, cdc.ReasonMalformedJSON},
		{"magic empty", `{"magic":"","type":"DT","message":` + good + `}`, cdc.ReasonMalformedJSON},
		{"magic number", `{"magic":5,"type":"DT","message":` + good + `}`, cdc.ReasonMalformedJSON},
		{"magic null", `{"magic":null,"type":"DT","message":` + good + `}`, cdc.ReasonMalformedJSON},
		{"unknown envelope type", `{"magic":"atMSG","type":"XX","message":` + good + `}`, cdc.ReasonUnknownOp},
		{"lower-case envelope type", `{"magic":"atMSG","type":"dt","message":` + good + `}`, cdc.ReasonUnknownOp},
		{"no envelope type", `{"magic":"atMSG","message":` + good + `}`, cdc.ReasonUnknownOp},
		{"envelope without message", `{"magic":"atMSG","type":"DT"}`, cdc.ReasonMissingField},
		{"envelope message null", `{"magic":"atMSG","type":"DT","message":null}`, cdc.ReasonMissingField},
		{"envelope message a string", `{"magic":"atMSG","type":"DT","message":"{}"}`, cdc.ReasonMissingField},
		{"DT envelope around metadata", dt(`{"lineage":{"schema":"S","table":"T"},"tableStructure":{"tableColumns":{"A":{"ordinal":1}}}}`), cdc.ReasonMissingField},
		// operation
		{"unknown operation", qmsg(`{"operation":"UPSERT","timestamp":"2026-07-13T04:00:00"}`, `{"A":"1"}`), cdc.ReasonUnknownOp},
		{"lower-case operation", qmsg(`{"operation":"insert","timestamp":"2026-07-13T04:00:00"}`, `{"A":"1"}`), cdc.ReasonUnknownOp},
		{"operation with a space", qmsg(`{"operation":"INSERT ","timestamp":"2026-07-13T04:00:00"}`, `{"A":"1"}`), cdc.ReasonUnknownOp},
		{"empty operation", qmsg(`{"operation":"","timestamp":"2026-07-13T04:00:00"}`, `{"A":"1"}`), cdc.ReasonUnknownOp},
		{"no operation", qmsg(`{"timestamp":"2026-07-13T04:00:00"}`, `{"A":"1"}`), cdc.ReasonUnknownOp},
		{"operation a number", qmsg(`{"operation":1,"timestamp":"2026-07-13T04:00:00"}`, `{"A":"1"}`), cdc.ReasonUnknownOp},
		{"GoldenGate op string", qmsg(`{"operation":"OBJECT_METADATA"}`, `{"A":"1"}`), cdc.ReasonUnknownOp},
		// masks
		{"non-hex changeMask", qmsg(`{"operation":"UPDATE","timestamp":"2026-07-13T04:00:00","changeMask":"0G"}`, `{"A":"1"}`), cdc.ReasonBadMask},
		{"non-hex columnMask", qmsg(`{"operation":"UPDATE","timestamp":"2026-07-13T04:00:00","columnMask":"xyz"}`, `{"A":"1"}`), cdc.ReasonBadMask},
		{"0x mask", qmsg(`{"operation":"UPDATE","timestamp":"2026-07-13T04:00:00","changeMask":"0x0B"}`, `{"A":"1"}`), cdc.ReasonBadMask},
		{"mask with a space", qmsg(`{"operation":"REFRESH","columnMask":"F F"}`, `{"A":"1"}`), cdc.ReasonBadMask},
		{"changeMask as a number", qmsg(`{"operation":"UPDATE","timestamp":"2026-07-13T04:00:00","changeMask":11}`, `{"A":"1"}`), cdc.ReasonBadMask},
		{"columnMask as a boolean", qmsg(`{"operation":"UPDATE","timestamp":"2026-07-13T04:00:00","columnMask":true}`, `{"A":"1"}`), cdc.ReasonBadMask},
		{"columnMask as an object", qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","columnMask":{}}`, `{"A":"1"}`), cdc.ReasonBadMask},
		// transaction headers, kept in columns of their own types
		{"event counter not a number", qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","transactionEventCounter":"seven"}`, `{"A":"1"}`), cdc.ReasonValueMismatch},
		{"event counter a fraction", qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","transactionEventCounter":1.5}`, `{"A":"1"}`), cdc.ReasonValueMismatch},
		{"event counter past int64", qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","transactionEventCounter":9223372036854775808}`, `{"A":"1"}`), cdc.ReasonValueMismatch},
		{"event counter a boolean", qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","transactionEventCounter":true}`, `{"A":"1"}`), cdc.ReasonValueMismatch},
		{"last event a number", qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","transactionLastEvent":1}`, `{"A":"1"}`), cdc.ReasonValueMismatch},
		{"last event another word", qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","transactionLastEvent":"yes"}`, `{"A":"1"}`), cdc.ReasonValueMismatch},
		{"last event an object", qmsg(`{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","transactionLastEvent":{}}`, `{"A":"1"}`), cdc.ReasonValueMismatch},
		// malformed
		{"empty input", ``, cdc.ReasonMalformedJSON},
		{"truncated", good[:len(good)-1], cdc.ReasonMalformedJSON},
		{"trailing garbage", good + `x`, cdc.ReasonMalformedJSON},
		{"two messages", good + good, cdc.ReasonMalformedJSON},
		{"array", `[` + good + `]`, cdc.ReasonMalformedJSON},
		{"string", `"x"`, cdc.ReasonMalformedJSON},
		{"number", `1`, cdc.ReasonMalformedJSON},
		{"null", `null`, cdc.ReasonMalformedJSON},
		{"single quotes", `{'headers':{}}`, cdc.ReasonMalformedJSON},
		{"truncated envelope", dt(good)[:40], cdc.ReasonMalformedJSON},
		{"invalid UTF-8 outside strings", "{\"headers\":{\"operation\":\"INSERT\"}\xff}", cdc.ReasonMalformedJSON},
		// structure
		{"no headers and no lineage", `{"schema":"S","table":"T","data":{"A":"1"}}`, cdc.ReasonMissingField},
		{"empty object", `{}`, cdc.ReasonMissingField},
		{"headers null", `{"table":"T","data":{"A":"1"},"headers":null}`, cdc.ReasonMissingField},
		{"headers a string", `{"table":"T","data":{"A":"1"},"headers":"INSERT"}`, cdc.ReasonMissingField},
		{"enveloped headers null", dt(`{"table":"T","data":{"A":"1"},"headers":null}`), cdc.ReasonMissingField},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { qlikReject(t, d, c.in, c.want) })
	}
}

// TestQlikRecordReuse: nothing of one message survives into the next.
func TestQlikRecordReuse(t *testing.T) {
	lines := readQlikSample(t)
	d := cdc.NewQlik(cdc.QlikOptions{})
	var rec cdc.Record
	// The UPDATE with every header and both images, then a bare REFRESH.
	if err := d.Decode([]byte(lines[4]), &rec); err != nil {
		t.Fatal(err)
	}
	if err := d.Decode([]byte(qmsg(`{"operation":"REFRESH"}`, `{"X":"1"}`)), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Qlik != (cdc.QlikHeaders{}) || rec.HasXID || rec.XID != "" || rec.HasPos || rec.Pos != "" || rec.HasOpTS || !rec.OpTS.IsZero() {
		t.Errorf("stale header state: %+v xid %q pos %q opts %v", rec.Qlik, rec.XID, rec.Pos, rec.OpTS)
	}
	wantImage(t, "beforeData", &rec.Before, nil)
	wantImage(t, "data", &rec.After, strs("X", "1"))
	if rec.Table != "S.T" || rec.Op != cdc.OpRefresh {
		t.Errorf("table %q op %v", rec.Table, rec.Op)
	}
	// A metadata record after it.
	if err := d.Decode([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Op != 0 || rec.OpType != "" || rec.Before.Present || rec.After.Present || rec.Class != cdc.ClassObjectMetadata {
		t.Errorf("metadata record with DML state: op %v %q before %v after %v", rec.Op, rec.OpType, rec.Before.Present, rec.After.Present)
	}
	// A reject leaves Format qlik, and the next good decode is complete.
	if err := d.Decode([]byte(`{"magic":"nope"}`), &rec); err == nil {
		t.Fatal("bad magic accepted")
	}
	if rec.Format != cdc.FormatQlik {
		t.Errorf("rejected record Format %v", rec.Format)
	}
	rec2 := qlikOK(t, d, lines[3])
	if err := d.Decode([]byte(lines[3]), &rec); err != nil {
		t.Fatal(err)
	}
	if summary(&rec) != summary(rec2) || rec.Qlik != rec2.Qlik || fmt.Sprint(fieldsOf(&rec.After)) != fmt.Sprint(fieldsOf(&rec2.After)) {
		t.Errorf("reused record differs from a fresh one:\n%s %+v\n%s %+v", summary(&rec), rec.Qlik, summary(rec2), rec2.Qlik)
	}
}

// TestAutoInterleaved: GoldenGate and Qlik messages in one stream, decoded
// into one Record, each by its own decoder.
func TestAutoInterleaved(t *testing.T) {
	gg := newDecoder(t, cdc.GoldenGateNames{})
	a := &cdc.Auto{GoldenGate: gg, Qlik: cdc.NewQlik(cdc.QlikOptions{})}
	lines := readQlikSample(t)
	type want struct {
		format cdc.Format
		class  cdc.Class
		table  string
		op     cdc.Op
	}
	const (
		gold = cdc.FormatGoldenGate
		qlik = cdc.FormatQlik
	)
	stream := []struct {
		in   string
		want want
	}{
		{refSchema, want{gold, cdc.ClassSchema, "", 0}},
		{lines[0], want{qlik, cdc.ClassObjectMetadata, "SALES.CUSTOMERS", 0}},
		{refObjectMetadata, want{gold, cdc.ClassObjectMetadata, "SALES.ORDERS", 0}},
		{lines[1], want{qlik, cdc.ClassDML, "SALES.CUSTOMERS", cdc.OpRefresh}},
		{refInsert, want{gold, cdc.ClassDML, "SALES.ORDERS", cdc.OpInsert}},
		{lines[3], want{qlik, cdc.ClassDML, "SALES.CUSTOMERS", cdc.OpInsert}}, // bare
		{wrapCE(refUpdate), want{gold, cdc.ClassDML, "SALES.ORDERS", cdc.OpUpdate}},
		{lines[4], want{qlik, cdc.ClassDML, "SALES.CUSTOMERS", cdc.OpUpdate}},
		{refStreamMetadata, want{gold, cdc.ClassStreamMetadata, "", 0}},
		{lines[6], want{qlik, cdc.ClassDML, "SALES.CUSTOMERS", cdc.OpDelete}},
		{refDelete, want{gold, cdc.ClassDML, "SALES.ORDERS", cdc.OpDelete}},
		{refCloudEvent, want{gold, cdc.ClassDML, "SALES.ORDERS", cdc.OpInsert}},
		{refDDL, want{gold, cdc.ClassDDL, "SALES.ORDERS", 0}},
		{lines[7], want{qlik, cdc.ClassObjectMetadata, "SALES.CUSTOMERS", 0}},
		{refUpsert, want{gold, cdc.ClassDML, "SALES.ORDERS", cdc.OpUpsert}},
		{lines[8], want{qlik, cdc.ClassDML, "SALES.CUSTOMERS", cdc.OpInsert}},
		// bare Qlik metadata, keyed by tableStructure first
		{`{"tableStructure":{"tableColumns":{"A":{"ordinal":1,"type":"INT4"}}},"lineage":{"schema":"S","table":"T"}}`, want{qlik, cdc.ClassObjectMetadata, "S.T", 0}},
	}
	var rec cdc.Record
	for i, s := range stream {
		if err := a.Decode([]byte(s.in), &rec); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got := want{rec.Format, rec.Class, rec.Table, rec.Op}
		if got != s.want {
			t.Errorf("message %d: got %+v, want %+v", i, got, s.want)
		}
		if rec.Format == gold && rec.Qlik != (cdc.QlikHeaders{}) {
			t.Errorf("message %d: GoldenGate record carries Qlik headers %+v", i, rec.Qlik)
		}
		if rec.Class == cdc.ClassDML && !rec.RowImage().Present {
			t.Errorf("message %d: no row image", i)
		}
		// GoldenGate DELETE rows come from before, Qlik data-only DELETEs
		// from data.
		if rec.Op == cdc.OpDelete {
			wantRow := &rec.Before
			if rec.Format == qlik {
				wantRow = &rec.After
			}
			if rec.RowImage() != wantRow {
				t.Errorf("message %d: %v DELETE uses the wrong image", i, rec.Format)
			}
		}
	}

	// Rejects go to the decoder of the format they look like.
	for _, c := range []struct {
		in   string
		want cdc.Reason
	}{
		{`{"magic":"atMSG","type":"ZZ","message":{}}`, cdc.ReasonUnknownOp},
		{`{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00"},"table":"T","data":{"A":"1"},"x":1}`, ""},
		{`{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","changeMask":"Q"},"table":"T","data":{"A":"1"}}`, cdc.ReasonBadMask},
		{`{"op_type":"INSERT","qual_table":"S.T","after":{"A":1}}`, cdc.ReasonBadOpTS},
		{`{"nothing":"known"}`, cdc.ReasonMissingField},
		{`not json`, cdc.ReasonMalformedJSON},
		{``, cdc.ReasonMalformedJSON},
	} {
		err := a.Decode([]byte(c.in), &rec)
		if c.want == "" {
			if err != nil || rec.Format != qlik {
				t.Errorf("Auto(%s) = %v (format %v), want a Qlik record", c.in, err, rec.Format)
			}
			continue
		}
		re, ok := cdc.AsReject(err)
		if !ok || re.Reason != c.want {
			t.Errorf("Auto(%s) = %v, want reject %q", c.in, err, c.want)
		}
	}
}

// TestAutoRenamedGoldenGateFields: a GoldenGate stream whose before image
// is renamed to Qlik's "beforeData" still goes to the GoldenGate decoder,
// whatever the key order, and Qlik messages still go to the Qlik one.
func TestAutoRenamedGoldenGateFields(t *testing.T) {
	gg := newDecoder(t, cdc.GoldenGateNames{Before: "beforeData", After: "afterData"})
	a := &cdc.Auto{GoldenGate: gg, Qlik: cdc.NewQlik(cdc.QlikOptions{})}
	var rec cdc.Record
	for _, in := range []string{
		`{"beforeData":{"ID":1,"S":"old"},"afterData":{"ID":1,"S":"new"},"qual_table":"S.T","op_type":"UPDATE","op_ts":"2026-07-13T04:00:00Z"}`,
		`{"qual_table":"S.T","op_type":"UPDATE","op_ts":"2026-07-13T04:00:00Z","beforeData":{"ID":1,"S":"old"},"afterData":{"ID":1,"S":"new"}}`,
	} {
		if err := a.Decode([]byte(in), &rec); err != nil {
			t.Fatalf("Auto(%s): %v", in, err)
		}
		if rec.Format != cdc.FormatGoldenGate || rec.Op != cdc.OpUpdate || rec.Table != "S.T" {
			t.Errorf("Auto(%s): format %v op %v table %q, want goldengate UPDATE S.T", in, rec.Format, rec.Op, rec.Table)
		}
		wantImage(t, "before", &rec.Before, []field{{"ID", "1", cdc.TypeNumber}, {"S", "old", cdc.TypeString}})
	}
	// A GoldenGate DELETE with only the renamed before image.
	in := `{"beforeData":{"ID":2},"qual_table":"S.T","op_type":"DELETE","op_ts":"2026-07-13T04:00:00Z"}`
	if err := a.Decode([]byte(in), &rec); err != nil || rec.Format != cdc.FormatGoldenGate || rec.RowImage() != &rec.Before {
		t.Errorf("Auto(%s): %v format %v", in, err, rec.Format)
	}
	for _, l := range readQlikSample(t) {
		if err := a.Decode([]byte(l), &rec); err != nil || rec.Format != cdc.FormatQlik {
			t.Errorf("Auto(%.60s): %v format %v, want a Qlik record", l, err, rec.Format)
		}
	}
}

// A mask sent as null is no mask: the message decodes, with every column
// taken as present.
func TestQlikNullMaskIsNoMask(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	rec := qlikOK(t, d, `{"table":"T","data":{"A":"1"},"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00","changeMask":null,"columnMask":null}}`)
	if rec.Qlik.ChangeMask != "" || rec.Qlik.ColumnMask != "" {
		t.Errorf("masks %q and %q, want none", rec.Qlik.ChangeMask, rec.Qlik.ColumnMask)
	}
}

// TestQlikTimestampOutsideSparkDatesIsRefused: as for GoldenGate, a
// timestamp whose UTC date is outside 0001-01-01 to 9999-12-31 is refused
// as bad_op_ts.
func TestQlikTimestampOutsideSparkDatesIsRefused(t *testing.T) {
	d := cdc.NewQlik(cdc.QlikOptions{})
	for _, ts := range []string{"9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"} {
		qlikReject(t, d, qmsg(`{"operation":"INSERT","timestamp":"`+ts+`"}`, `{"A":"1"}`), cdc.ReasonBadOpTS)
		qlikReject(t, d, dt(qmsg(`{"operation":"UPDATE","timestamp":"`+ts+`"}`, `{"A":"1"}`)), cdc.ReasonBadOpTS)
	}
	if rec := qlikOK(t, d, qmsg(`{"operation":"INSERT","timestamp":"9999-12-31T23:59:59"}`, `{"A":"1"}`)); rec.OpTS.Year() != 9999 {
		t.Errorf("the range's last second: OpTS %v", rec.OpTS)
	}
}

// TestQlikMaskOfSixteenColumns: the masks of a message Qlik Replicate sent
// for an UPDATE of a 16-column table, as published with a test of its
// Kafka target: "columnMask":"00FFFF" (every column present) and
// "changeMask":"008080" (ordinals 8 and 16 changed: item_desc and
// load_date_time, the two values that differ between beforeData and
// data). The hex text is one number, its last digit the first columns:
// read byte by byte from the left, "00FFFF" would say columns 1 to 8 are
// missing.
func TestQlikMaskOfSixteenColumns(t *testing.T) {
	wantOrdinals(t, "columnMask", "00FFFF", seq(1, 16))
	wantOrdinals(t, "changeMask", "008080", []int{8, 16})
}
