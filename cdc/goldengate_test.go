package cdc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// The records below are the examples of the GoldenGate Data Streams
// "Payload and Schema Reference", byte for byte where the reference gives
// one, and built from its field tables where it does not (schema and
// stream metadata records).
const (
	refSchema = `{
"id": "SALES.ORDERS",
"title": "SALES.ORDERS",
"$schema": "http://json-schema.org/draft-04/schema#",
"type": "object",
"definitions": {"tsType": {"type": "string", "format": "date-time"}},
"properties": {
  "ORDER_ID": {"type": "integer"},
  "STATUS": {"type": "string"},
  "TOTAL_AMOUNT": {"type": ["number", "null"]}
},
"required": ["ORDER_ID", "STATUS"],
"additionalProperties": false
}`

	refStreamMetadata = `{
"op_type": "STREAM_METADATA",
"producer": {"name": "Oracle GoldenGate Data Streams", "version": "23.9.0.0.0"},
"database": {"name": "ORCL", "version": "23.0", "charset": "AL32UTF8", "timeZone": "+00:00"},
"machine": {"node": "ggs1", "system": "Linux", "release": "5.15", "version": "#1 SMP", "hardware": "x86_64"},
"source": {"file": "dirdat/ea000000000", "uri": "trail://ea", "creationTime": "2026-07-13T04:00:00.000000Z", "compatibility": 7}
}`

	refObjectMetadata = `{
"op_type": "OBJECT_METADATA",
"qual_table": "SALES.ORDERS",
"columns": {
"ORDER_ID": {"type": "number", "null": false, "key": true},
"STATUS": {"type": "string", "null": false, "key": false},
"TOTAL_AMOUNT": {"type": "number", "null": true, "key": false}
}
}`

	refInsert = `{
"qual_table": "SALES.ORDERS",
"op_type": "INSERT",
"op_ts": "2026-07-13T04:01:01.123456Z",
"xid": "example-transaction-1001",
"pos": "G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001",
"after": {
"ORDER_ID": 1001,
"STATUS": "NEW",
"TOTAL_AMOUNT": 125.50
}
}`

	refUpdate = `{
"qual_table": "SALES.ORDERS",
"op_type": "UPDATE",
"op_ts": "2026-07-13T04:02:12.654321Z",
"xid": "example-transaction-1002",
"pos": "G-R0hJSktMTU5PUFFSU1RVVldYWVo=1002",
"before": {"ORDER_ID": 1001, "STATUS": "NEW"},
"after": {"ORDER_ID": 1001, "STATUS": "APPROVED"}
}`

	refDelete = `{
"qual_table": "SALES.ORDERS",
"op_type": "DELETE",
"op_ts": "2026-07-13T04:03:15.000000Z",
"xid": "example-transaction-1003",
"pos": "G-SktMTU5PUFFSU1RVVldYWVo=1003",
"before": {"ORDER_ID": 1001, "STATUS": "APPROVED"}
}`

	refUpsert = `{
"qual_table": "SALES.ORDERS",
"op_type": "UPSERT",
"op_ts": "2026-07-13T04:03:45.5Z",
"xid": "example-transaction-1005",
"pos": "G-UPSERT=1005",
"after": {"ORDER_ID": 1002, "STATUS": "NEW", "TOTAL_AMOUNT": null}
}`

	refDDL = `{
"op_type": "DDL",
"op_ts": "2026-07-13T04:04:30.000000Z",
"xid": "example-transaction-1004",
"pos": "G-TU5PUFFSU1RVVldYWVo=1004",
"ddl": {
"object": {
"catalog": "",
"schema": "SALES",
"object": "ORDERS"
},
"statement": "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)"
}
}`

	refCloudEvent = `{
"specversion": "1.0",
"type": "<runtime event type>",
"source": "<runtime event source>",
"id": "<runtime event id>",
"datacontenttype": "application/json",
"data": {
"qual_table": "SALES.ORDERS",
"op_type": "INSERT",
"op_ts": "2026-07-13T04:01:01.123456Z",
"xid": "example-transaction-1001",
"pos": "G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001",
"after": {"ORDER_ID": 1001, "STATUS": "NEW"}
}
}`
)

// --- helpers ---------------------------------------------------------------

func newDecoder(t testing.TB, names cdc.GoldenGateNames) *cdc.GoldenGate {
	t.Helper()
	d, err := cdc.NewGoldenGate(names)
	if err != nil {
		t.Fatalf("NewGoldenGate(%+v): %v", names, err)
	}
	return d
}

func decodeOK(t *testing.T, d *cdc.GoldenGate, in string) *cdc.Record {
	t.Helper()
	var rec cdc.Record
	if err := d.Decode([]byte(in), &rec); err != nil {
		t.Fatalf("Decode(%s): %v", in, err)
	}
	return &rec
}

func wantReject(t *testing.T, d *cdc.GoldenGate, in string, want cdc.Reason) {
	t.Helper()
	var rec cdc.Record
	err := d.Decode([]byte(in), &rec)
	if err == nil {
		t.Fatalf("Decode(%s) = nil error, want reject %q (class %v, op %v, table %q)", in, want, rec.Class, rec.Op, rec.Table)
	}
	var re *cdc.RejectError
	if !errors.As(err, &re) {
		t.Fatalf("Decode(%s) error %v (%T) is not a *cdc.RejectError", in, err, err)
	}
	if re.Reason != want {
		t.Fatalf("Decode(%s) reason = %q (%v), want %q", in, re.Reason, re, want)
	}
	if re.Detail == "" {
		t.Errorf("Decode(%s): reject %q has no detail", in, re.Reason)
	}
}

// field is a comparable view of a cdc.Field.
type field struct {
	Name  string
	Value string
	Type  cdc.ValueType
}

func fieldsOf(im *cdc.Image) []field {
	out := make([]field, 0, len(im.Fields))
	for _, f := range im.Fields {
		out = append(out, field{f.Name, string(f.Value), f.Type})
	}
	return out
}

func wantImage(t *testing.T, what string, im *cdc.Image, want []field) {
	t.Helper()
	if want == nil {
		if im.Present || len(im.Fields) != 0 {
			t.Errorf("%s image: present=%v fields=%v, want absent", what, im.Present, fieldsOf(im))
		}
		return
	}
	if !im.Present {
		t.Errorf("%s image not present", what)
	}
	got := fieldsOf(im)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
		t.Errorf("%s image fields:\n got %q\nwant %q", what, got, want)
	}
}

func utc(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
	return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
}

func wantTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
	if got.Location() != time.UTC {
		t.Errorf("%s location = %v, want UTC", what, got.Location())
	}
}

// wrapCE puts a record into a CloudEvents envelope, as a JSON object.
func wrapCE(rec string) string {
	return `{"specversion":"1.0","type":"com.oracle.goldengate","source":"/ggs/ds1","id":"ev-1","datacontenttype":"application/json","data":` + rec + `}`
}

// wrapCEString puts a record into a CloudEvents envelope as a JSON string.
func wrapCEString(rec string) string {
	q, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	return `{"specversion":"1.0","type":"com.oracle.goldengate","source":"/ggs/ds1","id":"ev-1","data":` + string(q) + `}`
}

// --- record classes ------------------------------------------------------

func TestDecodeSchemaRecord(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	cases := []struct {
		name, in, id string
	}{
		{"reference fields", refSchema, "SALES.ORDERS"},
		{"$schema only marks it", `{"$schema":"http://json-schema.org/draft-04/schema#","id":"urn:gg:stream"}`, "urn:gg:stream"},
		{"id and properties without $schema", `{"id":"SALES.ITEMS","type":"object","properties":{"A":{"type":"string"}}}`, "SALES.ITEMS"},
		{"escaped id", `{"$schema":"x","id":"SALES.\"Q\"\u00e9","properties":{}}`, `SALES."Q"é`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := decodeOK(t, d, c.in)
			if rec.Class != cdc.ClassSchema {
				t.Fatalf("Class = %v, want schema", rec.Class)
			}
			if rec.SchemaID != c.id {
				t.Errorf("SchemaID = %q, want %q", rec.SchemaID, c.id)
			}
			if !bytes.Equal(rec.Body, []byte(c.in)) {
				t.Errorf("Body = %s, want the whole record", rec.Body)
			}
			if rec.Op != 0 || rec.OpType != "" || rec.Table != "" {
				t.Errorf("schema record has op %v / op_type %q / table %q", rec.Op, rec.OpType, rec.Table)
			}
		})
	}

	// A schema record must name itself: the id is the cache key.
	wantReject(t, d, `{"$schema":"http://json-schema.org/draft-04/schema#","properties":{}}`, cdc.ReasonMalformedJSON)
	wantReject(t, d, `{"$schema":"x","id":"","properties":{}}`, cdc.ReasonMalformedJSON)
	wantReject(t, d, `{"$schema":"x","id":42,"properties":{}}`, cdc.ReasonMalformedJSON)
	wantReject(t, d, `{"$schema":"x","id":{"a":"b"},"properties":{}}`, cdc.ReasonMalformedJSON)
	// id alone, or id with non-object properties, is not a schema record.
	wantReject(t, d, `{"id":"SALES.ORDERS"}`, cdc.ReasonMissingField)
	wantReject(t, d, `{"id":"SALES.ORDERS","properties":[1]}`, cdc.ReasonMissingField)
}

func TestDecodeStreamMetadata(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	rec := decodeOK(t, d, refStreamMetadata)
	if rec.Class != cdc.ClassStreamMetadata {
		t.Fatalf("Class = %v, want stream_metadata", rec.Class)
	}
	if rec.OpType != "STREAM_METADATA" {
		t.Errorf("OpType = %q", rec.OpType)
	}
	if rec.Op != 0 || rec.Table != "" || rec.After.Present || rec.Before.Present {
		t.Errorf("stream metadata decoded as a row change: %+v", rec)
	}
	if !bytes.Equal(rec.Body, []byte(refStreamMetadata)) {
		t.Errorf("Body is not the record")
	}
}

func TestDecodeObjectMetadata(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	rec := decodeOK(t, d, refObjectMetadata)
	if rec.Class != cdc.ClassObjectMetadata || rec.OpType != "OBJECT_METADATA" {
		t.Fatalf("Class = %v, OpType = %q", rec.Class, rec.OpType)
	}
	if rec.Table != "SALES.ORDERS" || rec.Metadata.Table != "SALES.ORDERS" {
		t.Errorf("Table = %q, Metadata.Table = %q", rec.Table, rec.Metadata.Table)
	}
	want := []cdc.Column{
		{Name: "ORDER_ID", Type: "number", Nullable: false, Key: true},
		{Name: "STATUS", Type: "string", Nullable: false, Key: false},
		{Name: "TOTAL_AMOUNT", Type: "number", Nullable: true, Key: false},
	}
	if fmt.Sprint(rec.Metadata.Columns) != fmt.Sprint(want) {
		t.Errorf("Columns:\n got %+v\nwant %+v", rec.Metadata.Columns, want)
	}
	if !rec.Metadata.Equal(cdc.TableMetadata{Table: "SALES.ORDERS", Columns: want}) {
		t.Errorf("Metadata.Equal false for the same definition")
	}

	t.Run("document order, not sorted", func(t *testing.T) {
		rec := decodeOK(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{
			"ZETA":{"type":"string","null":true,"key":false},
			"ALPHA":{"type":"boolean","null":false,"key":false},
			"MID":{"type":"number","null":false,"key":true}}}`)
		var names []string
		for _, c := range rec.Metadata.Columns {
			names = append(names, c.Name)
		}
		if strings.Join(names, ",") != "ZETA,ALPHA,MID" {
			t.Errorf("column order = %v, want ZETA,ALPHA,MID", names)
		}
		if c := rec.Metadata.Columns[1]; c.Type != "boolean" || c.Nullable || c.Key {
			t.Errorf("ALPHA = %+v", c)
		}
		if c := rec.Metadata.Columns[2]; !c.Key || c.Nullable {
			t.Errorf("MID = %+v", c)
		}
	})

	t.Run("flags default to nullable, not key", func(t *testing.T) {
		rec := decodeOK(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"A":{"type":"string"},"B":{},"C":{"null":false}}}`)
		want := []cdc.Column{
			{Name: "A", Type: "string", Nullable: true},
			{Name: "B", Nullable: true},
			{Name: "C", Nullable: false},
		}
		if fmt.Sprint(rec.Metadata.Columns) != fmt.Sprint(want) {
			t.Errorf("Columns = %+v, want %+v", rec.Metadata.Columns, want)
		}
	})

	t.Run("escaped column names", func(t *testing.T) {
		rec := decodeOK(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"A\u0042":{"type":"string"},"caf\u00e9":{"type":"number"}}}`)
		if len(rec.Metadata.Columns) != 2 || rec.Metadata.Columns[0].Name != "AB" || rec.Metadata.Columns[1].Name != "café" {
			t.Errorf("Columns = %+v, want AB and café", rec.Metadata.Columns)
		}
	})

	t.Run("optional op_ts and pos are kept", func(t *testing.T) {
		rec := decodeOK(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","op_ts":"2026-07-13T04:00:00+02:00","pos":"P-1","columns":{"A":{"type":"string"}}}`)
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 2, 0, 0, 0))
		if !rec.HasOpTS || !rec.HasPos || rec.Pos != "P-1" {
			t.Errorf("HasOpTS=%v HasPos=%v Pos=%q", rec.HasOpTS, rec.HasPos, rec.Pos)
		}
	})

	t.Run("rejects", func(t *testing.T) {
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T"}`, cdc.ReasonBadMetadata)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{}}`, cdc.ReasonBadMetadata)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":null}`, cdc.ReasonBadMetadata)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":[{"A":{}}]}`, cdc.ReasonBadMetadata)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"A":{"type":"string"},"B":{},"A":{"type":"number"}}}`, cdc.ReasonBadMetadata)
		// the same name spelled with an escape is the same column
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"AB":{},"A\u0042":{}}}`, cdc.ReasonBadMetadata)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"A":"string"}}`, cdc.ReasonBadMetadata)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","columns":{"A":{}}}`, cdc.ReasonBadTableName)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"","columns":{"A":{}}}`, cdc.ReasonBadTableName)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","op_ts":"2026-13-01T00:00:00Z","columns":{"A":{}}}`, cdc.ReasonBadOpTS)
	})
}

// TestMetadataKeptAcrossReuse: the schema catalog caches rec.Metadata; the
// next record decoded into the same Record must not rewrite the cache.
func TestMetadataKeptAcrossReuse(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	var rec cdc.Record
	if err := d.Decode([]byte(refObjectMetadata), &rec); err != nil {
		t.Fatal(err)
	}
	kept := rec.Metadata
	want := fmt.Sprint(kept.Columns)
	other := `{"op_type":"OBJECT_METADATA","qual_table":"HR.EMP","columns":{"EMP_ID":{"type":"number"},"NAME":{"type":"string"}}}`
	if err := d.Decode([]byte(other), &rec); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(kept.Columns); got != want {
		t.Errorf("kept metadata of SALES.ORDERS changed after decoding HR.EMP:\n got %s\nwant %s", got, want)
	}
	if rec.Metadata.Table != "HR.EMP" || len(rec.Metadata.Columns) != 2 || rec.Metadata.Columns[0].Name != "EMP_ID" {
		t.Errorf("second metadata = %+v", rec.Metadata)
	}
}

func TestDecodeDML(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})

	t.Run("INSERT", func(t *testing.T) {
		rec := decodeOK(t, d, refInsert)
		if rec.Class != cdc.ClassDML || rec.Op != cdc.OpInsert || rec.OpType != "INSERT" {
			t.Fatalf("Class=%v Op=%v OpType=%q", rec.Class, rec.Op, rec.OpType)
		}
		if rec.Table != "SALES.ORDERS" {
			t.Errorf("Table = %q", rec.Table)
		}
		if !rec.HasOpTS {
			t.Errorf("HasOpTS false")
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 1, 1, 123456000))
		if !rec.HasXID || rec.XID != "example-transaction-1001" {
			t.Errorf("XID = %q (%v)", rec.XID, rec.HasXID)
		}
		if !rec.HasPos || rec.Pos != "G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001" {
			t.Errorf("Pos = %q (%v)", rec.Pos, rec.HasPos)
		}
		wantImage(t, "before", &rec.Before, nil)
		wantImage(t, "after", &rec.After, []field{
			{"ORDER_ID", "1001", cdc.TypeNumber},
			{"STATUS", "NEW", cdc.TypeString},
			{"TOTAL_AMOUNT", "125.50", cdc.TypeNumber}, // raw text, trailing zero kept
		})
		if rec.RowImage() != &rec.After {
			t.Errorf("RowImage of INSERT is not after")
		}
		if !bytes.Equal(rec.Body, []byte(refInsert)) {
			t.Errorf("Body is not the record")
		}
	})

	t.Run("UPDATE", func(t *testing.T) {
		rec := decodeOK(t, d, refUpdate)
		if rec.Class != cdc.ClassDML || rec.Op != cdc.OpUpdate || rec.OpType != "UPDATE" {
			t.Fatalf("Class=%v Op=%v OpType=%q", rec.Class, rec.Op, rec.OpType)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 2, 12, 654321000))
		if rec.XID != "example-transaction-1002" || rec.Pos != "G-R0hJSktMTU5PUFFSU1RVVldYWVo=1002" {
			t.Errorf("XID=%q Pos=%q", rec.XID, rec.Pos)
		}
		// partial images: TOTAL_AMOUNT was not captured
		wantImage(t, "before", &rec.Before, []field{{"ORDER_ID", "1001", cdc.TypeNumber}, {"STATUS", "NEW", cdc.TypeString}})
		wantImage(t, "after", &rec.After, []field{{"ORDER_ID", "1001", cdc.TypeNumber}, {"STATUS", "APPROVED", cdc.TypeString}})
		if rec.RowImage() != &rec.After {
			t.Errorf("RowImage of UPDATE is not after")
		}
	})

	t.Run("DELETE", func(t *testing.T) {
		rec := decodeOK(t, d, refDelete)
		if rec.Class != cdc.ClassDML || rec.Op != cdc.OpDelete || rec.OpType != "DELETE" {
			t.Fatalf("Class=%v Op=%v OpType=%q", rec.Class, rec.Op, rec.OpType)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 3, 15, 0))
		if rec.XID != "example-transaction-1003" || rec.Pos != "G-SktMTU5PUFFSU1RVVldYWVo=1003" {
			t.Errorf("XID=%q Pos=%q", rec.XID, rec.Pos)
		}
		wantImage(t, "before", &rec.Before, []field{{"ORDER_ID", "1001", cdc.TypeNumber}, {"STATUS", "APPROVED", cdc.TypeString}})
		wantImage(t, "after", &rec.After, nil)
		if rec.RowImage() != &rec.Before {
			t.Errorf("RowImage of DELETE is not before")
		}
	})

	t.Run("UPSERT", func(t *testing.T) {
		rec := decodeOK(t, d, refUpsert)
		if rec.Class != cdc.ClassDML || rec.Op != cdc.OpUpsert || rec.OpType != "UPSERT" {
			t.Fatalf("Class=%v Op=%v OpType=%q", rec.Class, rec.Op, rec.OpType)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 3, 45, 500000000))
		wantImage(t, "after", &rec.After, []field{
			{"ORDER_ID", "1002", cdc.TypeNumber}, {"STATUS", "NEW", cdc.TypeString}, {"TOTAL_AMOUNT", "null", cdc.TypeNull},
		})
		if rec.RowImage() != &rec.After {
			t.Errorf("RowImage of UPSERT is not after")
		}
	})

	t.Run("UPSERT with before", func(t *testing.T) {
		rec := decodeOK(t, d, `{"qual_table":"S.T","op_type":"UPSERT","op_ts":"2026-07-13T04:00:00Z","before":{"A":1},"after":{"A":2}}`)
		wantImage(t, "before", &rec.Before, []field{{"A", "1", cdc.TypeNumber}})
		wantImage(t, "after", &rec.After, []field{{"A", "2", cdc.TypeNumber}})
	})
}

func TestDecodeOpTSOffsets(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	cases := []struct {
		opTS string
		want time.Time
	}{
		// +02:00 just after local midnight is the previous UTC day
		{"2026-07-13T01:30:00.250+02:00", utc(2026, 7, 12, 23, 30, 0, 250000000)},
		{"2026-07-13T00:00:00+02:00", utc(2026, 7, 12, 22, 0, 0, 0)},
		// a negative offset late in the day is the next UTC day, and year
		{"2026-12-31T22:00:00-05:00", utc(2027, 1, 1, 3, 0, 0, 0)},
		{"2024-02-29T23:59:59.999999-0100", utc(2024, 3, 1, 0, 59, 59, 999999000)},
		{"2026-07-13 04:01:01.123456", utc(2026, 7, 13, 4, 1, 1, 123456000)},
		// escapes in a JSON string stand for the characters they spell
		{`2026-07-13T04:01:01\u002e5Z`, utc(2026, 7, 13, 4, 1, 1, 500000000)},
	}
	for _, c := range cases {
		in := `{"qual_table":"S.T","op_type":"INSERT","op_ts":"` + c.opTS + `","after":{"A":1}}`
		rec := decodeOK(t, d, in)
		wantTime(t, "OpTS of "+c.opTS, rec.OpTS, c.want)
		if !rec.HasOpTS {
			t.Errorf("%s: HasOpTS false", c.opTS)
		}
	}
}

func TestDecodePosAndXIDExact(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	cases := []struct {
		name      string
		json      string // the JSON text of the pos value
		want      string // the string it stands for
		xidJSON   string
		xidWanted string
	}{
		{"base64 with padding", `"G-QUJD+/==1001"`, "G-QUJD+/==1001", `"1.2.3"`, "1.2.3"},
		{"escaped quote, backslash, slash", `"a\"b\\c\/d"`, `a"b\c/d`, `"x\\y"`, `x\y`},
		{"unicode escape and raw utf-8", `"pos-\u00e9-é-\u20ac"`, "pos-é-é-€", `"tx\u0031"`, "tx1"},
		{"control escapes", `"\t\n\r\b\f"`, "\t\n\r\b\f", `"\u0000"`, "\x00"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀", `"ok"`, "ok"},
		{"leading zeros and spaces kept", `"  000123  "`, "  000123  ", `"0007"`, "0007"},
		{"percent and equals", `"%41=%2F?&#"`, "%41=%2F?&#", `""`, ""},
		{"numbers are kept verbatim", `1.50`, "1.50", `1001`, "1001"},
		{"exponent verbatim", `10E+3`, "10E+3", `-0`, "-0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","xid":` + c.xidJSON + `,"pos":` + c.json + `,"after":{"A":1}}`
			rec := decodeOK(t, d, in)
			if !rec.HasPos || rec.Pos != c.want {
				t.Errorf("Pos = %q (has %v), want %q", rec.Pos, rec.HasPos, c.want)
			}
			if !rec.HasXID || rec.XID != c.xidWanted {
				t.Errorf("XID = %q (has %v), want %q", rec.XID, rec.HasXID, c.xidWanted)
			}
			// The wanted string is what encoding/json makes of the value,
			// for string values.
			if c.json[0] == '"' {
				var s string
				if err := json.Unmarshal([]byte(c.json), &s); err != nil || s != c.want {
					t.Fatalf("test table is wrong: %s unmarshals to %q (%v)", c.json, s, err)
				}
			}
		})
	}

	t.Run("absent and null", func(t *testing.T) {
		rec := decodeOK(t, d, `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","xid":null,"after":{"A":1}}`)
		if rec.HasXID || rec.XID != "" || rec.HasPos || rec.Pos != "" {
			t.Errorf("HasXID=%v XID=%q HasPos=%v Pos=%q, want all absent", rec.HasXID, rec.XID, rec.HasPos, rec.Pos)
		}
	})
}

func TestDecodeImageValues(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	in := `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{
		"S":"a\"b\\c\u00e9",
		"N":-12.5e3,
		"I":9223372036854775808,
		"T":true,
		"F":false,
		"Z":null,
		"O":{"k":[1,2]},
		"L":[1,"x",null],
		"E":"",
		"C\u0042":"escaped name"
	}}`
	rec := decodeOK(t, d, in)
	wantImage(t, "after", &rec.After, []field{
		{"S", `a\"b\\c\u00e9`, cdc.TypeString}, // still escaped: see Field.Text
		{"N", "-12.5e3", cdc.TypeNumber},
		{"I", "9223372036854775808", cdc.TypeNumber}, // past int64: raw text, not clamped
		{"T", "true", cdc.TypeBool},
		{"F", "false", cdc.TypeBool},
		{"Z", "null", cdc.TypeNull},
		{"O", `{"k":[1,2]}`, cdc.TypeObject},
		{"L", `[1,"x",null]`, cdc.TypeArray},
		{"E", "", cdc.TypeString},
		{"CB", "escaped name", cdc.TypeString},
	})
	txt, err := rec.After.Fields[0].Text(nil)
	if err != nil || string(txt) != `a"b\cé` {
		t.Errorf("Text of S = %q, %v; want %q", txt, err, `a"b\cé`)
	}

	// An image that is null is absent; a before image on INSERT is kept.
	rec = decodeOK(t, d, `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","before":null,"after":{"A":1}}`)
	wantImage(t, "before", &rec.Before, nil)
	rec = decodeOK(t, d, `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","before":{"A":0},"after":{"A":1}}`)
	wantImage(t, "before", &rec.Before, []field{{"A", "0", cdc.TypeNumber}})

	// Images that are not objects are malformed.
	wantReject(t, d, `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":[1,2]}`, cdc.ReasonMalformedJSON)
	wantReject(t, d, `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":"A=1"}`, cdc.ReasonMalformedJSON)
	wantReject(t, d, `{"qual_table":"S.T","op_type":"UPDATE","op_ts":"2026-07-13T04:00:00Z","before":7,"after":{"A":1}}`, cdc.ReasonMalformedJSON)
}

func TestDecodeDDL(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})

	t.Run("reference", func(t *testing.T) {
		rec := decodeOK(t, d, refDDL)
		if rec.Class != cdc.ClassDDL || rec.OpType != "DDL" || rec.Op != 0 {
			t.Fatalf("Class=%v OpType=%q Op=%v", rec.Class, rec.OpType, rec.Op)
		}
		// empty catalog is skipped, no leading dot
		if rec.Table != "SALES.ORDERS" {
			t.Errorf("Table = %q, want SALES.ORDERS", rec.Table)
		}
		want := cdc.DDL{Catalog: "", Schema: "SALES", Object: "ORDERS", Statement: "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)"}
		if rec.DDL != want {
			t.Errorf("DDL = %+v, want %+v", rec.DDL, want)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 4, 30, 0))
		if rec.XID != "example-transaction-1004" || rec.Pos != "G-TU5PUFFSU1RVVldYWVo=1004" {
			t.Errorf("XID=%q Pos=%q", rec.XID, rec.Pos)
		}
		if rec.After.Present || rec.Before.Present {
			t.Errorf("DDL has a row image")
		}
	})

	t.Run("catalog kept", func(t *testing.T) {
		rec := decodeOK(t, d, `{"op_type":"DDL","op_ts":"2026-07-13T04:04:30Z","ddl":{"object":{"catalog":"CDB1","schema":"SALES","object":"ORDERS"},"statement":"DROP TABLE X"}}`)
		if rec.Table != "CDB1.SALES.ORDERS" || rec.DDL.Catalog != "CDB1" {
			t.Errorf("Table = %q, DDL = %+v", rec.Table, rec.DDL)
		}
	})

	t.Run("no schema", func(t *testing.T) {
		rec := decodeOK(t, d, `{"op_type":"DDL","ddl":{"object":{"catalog":"","schema":"","object":"ORDERS"},"statement":"x"}}`)
		if rec.Table != "ORDERS" {
			t.Errorf("Table = %q, want ORDERS", rec.Table)
		}
	})

	t.Run("qual_table wins", func(t *testing.T) {
		rec := decodeOK(t, d, `{"op_type":"DDL","qual_table":"PDB1.SALES.ORDERS","op_ts":"2026-07-13T04:04:30Z","ddl":{"object":{"catalog":"","schema":"SALES","object":"ORDERS"},"statement":"ALTER TABLE SALES.ORDERS DROP COLUMN X"}}`)
		if rec.Table != "PDB1.SALES.ORDERS" {
			t.Errorf("Table = %q, want qual_table", rec.Table)
		}
		if rec.DDL.Schema != "SALES" || rec.DDL.Object != "ORDERS" || rec.DDL.Statement != "ALTER TABLE SALES.ORDERS DROP COLUMN X" {
			t.Errorf("DDL = %+v", rec.DDL)
		}
	})

	t.Run("escaped statement", func(t *testing.T) {
		rec := decodeOK(t, d, `{"op_type":"DDL","ddl":{"object":{"schema":"S","object":"T"},"statement":"COMMENT ON TABLE S.T IS 'a \"b\"\n\u00e9'"}}`)
		if rec.DDL.Statement != "COMMENT ON TABLE S.T IS 'a \"b\"\né'" {
			t.Errorf("Statement = %q", rec.DDL.Statement)
		}
	})

	t.Run("rejects", func(t *testing.T) {
		wantReject(t, d, `{"op_type":"DDL","op_ts":"2026-07-13T04:04:30Z"}`, cdc.ReasonMissingField)
		wantReject(t, d, `{"op_type":"DDL","ddl":"ALTER TABLE X"}`, cdc.ReasonMissingField)
		wantReject(t, d, `{"op_type":"DDL","ddl":{"object":{"catalog":"","schema":"","object":""},"statement":"x"}}`, cdc.ReasonBadTableName)
		wantReject(t, d, `{"op_type":"DDL","ddl":{"statement":"x"}}`, cdc.ReasonBadTableName)
		wantReject(t, d, `{"op_type":"DDL","op_ts":"13/07/2026","ddl":{"object":{"schema":"S","object":"T"}}}`, cdc.ReasonBadOpTS)
	})
}

func TestDecodeTableFromNameMetadata(t *testing.T) {
	// Without qual_table, optional catalog/schema/table metadata names the table.
	d := newDecoder(t, cdc.GoldenGateNames{})
	rec := decodeOK(t, d, `{"catalog":"","schema":"SALES","table":"ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`)
	if rec.Table != "SALES.ORDERS" {
		t.Errorf("Table = %q, want SALES.ORDERS", rec.Table)
	}
	rec = decodeOK(t, d, `{"catalog":"CDB","schema":"SALES","table":"ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`)
	if rec.Table != "CDB.SALES.ORDERS" {
		t.Errorf("Table = %q, want CDB.SALES.ORDERS", rec.Table)
	}
	// a non-string table is not a name
	wantReject(t, d, `{"table":{"x":1},"op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`, cdc.ReasonBadTableName)
}

func TestDecodeCloudEvents(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})

	t.Run("reference envelope", func(t *testing.T) {
		rec := decodeOK(t, d, refCloudEvent)
		if rec.Class != cdc.ClassDML || rec.Op != cdc.OpInsert || rec.Table != "SALES.ORDERS" {
			t.Fatalf("Class=%v Op=%v Table=%q", rec.Class, rec.Op, rec.Table)
		}
		wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 1, 1, 123456000))
		if rec.XID != "example-transaction-1001" || rec.Pos != "G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001" {
			t.Errorf("XID=%q Pos=%q (the envelope id must not leak in)", rec.XID, rec.Pos)
		}
		wantImage(t, "after", &rec.After, []field{{"ORDER_ID", "1001", cdc.TypeNumber}, {"STATUS", "NEW", cdc.TypeString}})
		i := strings.Index(refCloudEvent, `"data": `) + len(`"data": `)
		inner := strings.TrimSpace(refCloudEvent[i : len(refCloudEvent)-1])
		if string(rec.Body) != inner {
			t.Errorf("Body = %s\nwant the data member %s", rec.Body, inner)
		}
	})

	type check func(t *testing.T, rec *cdc.Record)
	classes := []struct {
		name  string
		rec   string
		check check
	}{
		{"schema", refSchema, func(t *testing.T, rec *cdc.Record) {
			if rec.Class != cdc.ClassSchema || rec.SchemaID != "SALES.ORDERS" {
				t.Errorf("Class=%v SchemaID=%q (envelope id must not be taken)", rec.Class, rec.SchemaID)
			}
		}},
		{"stream metadata", refStreamMetadata, func(t *testing.T, rec *cdc.Record) {
			if rec.Class != cdc.ClassStreamMetadata {
				t.Errorf("Class = %v", rec.Class)
			}
		}},
		{"object metadata", refObjectMetadata, func(t *testing.T, rec *cdc.Record) {
			if rec.Class != cdc.ClassObjectMetadata || rec.Table != "SALES.ORDERS" || len(rec.Metadata.Columns) != 3 ||
				rec.Metadata.Columns[2] != (cdc.Column{Name: "TOTAL_AMOUNT", Type: "number", Nullable: true}) {
				t.Errorf("Class=%v Table=%q Columns=%+v", rec.Class, rec.Table, rec.Metadata.Columns)
			}
		}},
		{"insert", refInsert, func(t *testing.T, rec *cdc.Record) {
			if rec.Op != cdc.OpInsert || len(rec.After.Fields) != 3 || string(rec.After.Fields[2].Value) != "125.50" {
				t.Errorf("Op=%v After=%v", rec.Op, fieldsOf(&rec.After))
			}
		}},
		{"update", refUpdate, func(t *testing.T, rec *cdc.Record) {
			if rec.Op != cdc.OpUpdate || !rec.Before.Present || string(rec.After.Fields[1].Value) != "APPROVED" {
				t.Errorf("Op=%v Before=%v After=%v", rec.Op, fieldsOf(&rec.Before), fieldsOf(&rec.After))
			}
		}},
		{"delete", refDelete, func(t *testing.T, rec *cdc.Record) {
			if rec.Op != cdc.OpDelete || rec.RowImage() != &rec.Before || rec.After.Present {
				t.Errorf("Op=%v", rec.Op)
			}
			wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 13, 4, 3, 15, 0))
		}},
		{"upsert", refUpsert, func(t *testing.T, rec *cdc.Record) {
			if rec.Op != cdc.OpUpsert || rec.Pos != "G-UPSERT=1005" {
				t.Errorf("Op=%v Pos=%q", rec.Op, rec.Pos)
			}
		}},
		{"ddl", refDDL, func(t *testing.T, rec *cdc.Record) {
			if rec.Class != cdc.ClassDDL || rec.Table != "SALES.ORDERS" || rec.DDL.Statement != "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)" {
				t.Errorf("Class=%v Table=%q DDL=%+v", rec.Class, rec.Table, rec.DDL)
			}
		}},
	}
	for _, c := range classes {
		t.Run(c.name+"/data object", func(t *testing.T) {
			rec := decodeOK(t, d, wrapCE(c.rec))
			c.check(t, rec)
			if string(rec.Body) != c.rec {
				t.Errorf("Body is not the data member:\n%s", rec.Body)
			}
		})
		t.Run(c.name+"/data string", func(t *testing.T) {
			rec := decodeOK(t, d, wrapCEString(c.rec))
			c.check(t, rec)
			if string(rec.Body) != c.rec {
				t.Errorf("Body is not the unescaped data string:\n%s", rec.Body)
			}
		})
	}

	t.Run("data string with escapes inside values", func(t *testing.T) {
		inner := `{"qual_table":"S.\"Q\"","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","pos":"p\\1","after":{"S":"caf\u00e9 \"x\""}}`
		rec := decodeOK(t, d, wrapCEString(inner))
		if rec.Table != `S."Q"` || rec.Pos != `p\1` {
			t.Errorf("Table=%q Pos=%q", rec.Table, rec.Pos)
		}
		txt, err := rec.After.Fields[0].Text(nil)
		if err != nil || string(txt) != `café "x"` {
			t.Errorf("Text = %q, %v", txt, err)
		}
	})

	t.Run("rejects", func(t *testing.T) {
		env := `{"specversion":"1.0","type":"t","source":"s","id":"i","data":`
		wantReject(t, d, env+`null}`, cdc.ReasonMalformedJSON)
		wantReject(t, d, env+`[1,2]}`, cdc.ReasonMalformedJSON)
		wantReject(t, d, env+`42}`, cdc.ReasonMalformedJSON)
		wantReject(t, d, env+`"not json"}`, cdc.ReasonMalformedJSON)
		wantReject(t, d, env+`"[1,2]"}`, cdc.ReasonMalformedJSON)
		wantReject(t, d, env+`"{\"op_type\":\"INSERT\""}`, cdc.ReasonMalformedJSON)
		// an envelope inside an envelope
		wantReject(t, d, wrapCE(wrapCE(refInsert)), cdc.ReasonMalformedJSON)
		wantReject(t, d, wrapCEString(wrapCEString(refInsert)), cdc.ReasonMalformedJSON)
		// the inner record is checked like a plain one
		wantReject(t, d, wrapCE(`{"qual_table":"S.T","op_type":"MERGE","op_ts":"2026-07-13T04:00:00Z","after":{}}`), cdc.ReasonUnknownOp)
		wantReject(t, d, wrapCEString(`{"qual_table":"S.T","op_type":"DELETE","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`), cdc.ReasonMissingImage)
		// an envelope without data is just a record without op_type
		wantReject(t, d, `{"specversion":"1.0","type":"t","source":"s","id":"i"}`, cdc.ReasonMissingField)
	})
}

func TestDecodeRenamedFields(t *testing.T) {
	names := cdc.GoldenGateNames{
		QualTable: "table_name",
		OpType:    "operation",
		OpTS:      "ts",
		XID:       "txid",
		Pos:       "position",
		Before:    "old",
		After:     "new",
		Insert:    "I",
		Update:    "U",
		Delete:    "D",
		Upsert:    "M",
	}
	d := newDecoder(t, names)
	if got := d.Names(); got != names {
		t.Errorf("Names() = %+v, want %+v", got, names)
	}

	rec := decodeOK(t, d, `{"table_name":"SALES.ORDERS","operation":"I","ts":"2026-07-13T01:00:00+02:00","txid":"t1","position":"p1","new":{"ORDER_ID":1}}`)
	if rec.Class != cdc.ClassDML || rec.Op != cdc.OpInsert || rec.OpType != "I" || rec.Table != "SALES.ORDERS" {
		t.Fatalf("Class=%v Op=%v OpType=%q Table=%q", rec.Class, rec.Op, rec.OpType, rec.Table)
	}
	if rec.Op.String() != "INSERT" {
		t.Errorf("Op.String() = %q: the op_type column gets the canonical name", rec.Op.String())
	}
	wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 12, 23, 0, 0, 0))
	if rec.XID != "t1" || rec.Pos != "p1" {
		t.Errorf("XID=%q Pos=%q", rec.XID, rec.Pos)
	}
	wantImage(t, "after", &rec.After, []field{{"ORDER_ID", "1", cdc.TypeNumber}})

	rec = decodeOK(t, d, `{"table_name":"S.T","operation":"U","ts":"2026-07-13T04:00:00Z","old":{"A":1},"new":{"A":2}}`)
	if rec.Op != cdc.OpUpdate {
		t.Errorf("Op = %v", rec.Op)
	}
	wantImage(t, "before", &rec.Before, []field{{"A", "1", cdc.TypeNumber}})
	wantImage(t, "after", &rec.After, []field{{"A", "2", cdc.TypeNumber}})

	rec = decodeOK(t, d, `{"table_name":"S.T","operation":"D","ts":"2026-07-13T04:00:00Z","old":{"A":1}}`)
	if rec.Op != cdc.OpDelete || rec.RowImage() != &rec.Before {
		t.Errorf("Op = %v", rec.Op)
	}
	rec = decodeOK(t, d, `{"table_name":"S.T","operation":"M","ts":"2026-07-13T04:00:00Z","new":{"A":1}}`)
	if rec.Op != cdc.OpUpsert {
		t.Errorf("Op = %v", rec.Op)
	}

	// Record classes keep their fixed op strings under the renamed field.
	rec = decodeOK(t, d, `{"operation":"OBJECT_METADATA","table_name":"S.T","columns":{"A":{"type":"number"}}}`)
	if rec.Class != cdc.ClassObjectMetadata || rec.Table != "S.T" {
		t.Errorf("Class=%v Table=%q", rec.Class, rec.Table)
	}
	rec = decodeOK(t, d, `{"operation":"DDL","ddl":{"object":{"schema":"S","object":"T"},"statement":"x"}}`)
	if rec.Class != cdc.ClassDDL || rec.Table != "S.T" {
		t.Errorf("Class=%v Table=%q", rec.Class, rec.Table)
	}
	rec = decodeOK(t, d, `{"operation":"STREAM_METADATA"}`)
	if rec.Class != cdc.ClassStreamMetadata {
		t.Errorf("Class=%v", rec.Class)
	}

	// Metadata and DDL records that keep the documented qual_table are
	// read by it when the renamed field is absent; the renamed one wins.
	rec = decodeOK(t, d, `{"operation":"OBJECT_METADATA","qual_table":"S.Q","columns":{"A":{"type":"number"}}}`)
	if rec.Class != cdc.ClassObjectMetadata || rec.Table != "S.Q" || rec.Metadata.Table != "S.Q" {
		t.Errorf("metadata with qual_table: Class=%v Table=%q", rec.Class, rec.Table)
	}
	rec = decodeOK(t, d, `{"qual_table":"S.OLD","operation":"OBJECT_METADATA","table_name":"S.NEW","columns":{"A":{"type":"number"}}}`)
	if rec.Table != "S.NEW" {
		t.Errorf("metadata with both names: Table=%q, want the renamed field's", rec.Table)
	}
	rec = decodeOK(t, d, `{"operation":"DDL","qual_table":"S.Q","ddl":{"object":{"schema":"S","object":"OTHER"},"statement":"x"}}`)
	if rec.Class != cdc.ClassDDL || rec.Table != "S.Q" {
		t.Errorf("DDL with qual_table: Class=%v Table=%q", rec.Class, rec.Table)
	}

	// The default names mean nothing to this decoder's DML.
	wantReject(t, d, `{"table_name":"S.T","operation":"INSERT","ts":"2026-07-13T04:00:00Z","new":{"A":1}}`, cdc.ReasonUnknownOp)
	wantReject(t, d, `{"qual_table":"S.T","operation":"I","ts":"2026-07-13T04:00:00Z","new":{"A":1}}`, cdc.ReasonBadTableName)
	wantReject(t, d, `{"table_name":"S.T","op_type":"I","ts":"2026-07-13T04:00:00Z","new":{"A":1}}`, cdc.ReasonMissingField)
	wantReject(t, d, `{"table_name":"S.T","operation":"I","op_ts":"2026-07-13T04:00:00Z","new":{"A":1}}`, cdc.ReasonBadOpTS)
	wantReject(t, d, `{"table_name":"S.T","operation":"I","ts":"2026-07-13T04:00:00Z","after":{"A":1}}`, cdc.ReasonMissingImage)
	wantReject(t, d, `{"table_name":"S.T","operation":"D","ts":"2026-07-13T04:00:00Z","before":{"A":1}}`, cdc.ReasonMissingImage)

	// Only some names changed: the rest keep their defaults.
	d2 := newDecoder(t, cdc.GoldenGateNames{QualTable: "tbl", Insert: "ins"})
	if n := d2.Names(); n.OpType != "op_type" || n.After != "after" || n.Update != "UPDATE" || n.QualTable != "tbl" || n.Insert != "ins" {
		t.Errorf("Names() = %+v", n)
	}
	rec = decodeOK(t, d2, `{"tbl":"S.T","op_type":"ins","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`)
	if rec.Op != cdc.OpInsert || rec.Table != "S.T" {
		t.Errorf("Op=%v Table=%q", rec.Op, rec.Table)
	}
	rec = decodeOK(t, d2, `{"tbl":"S.T","op_type":"UPDATE","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`)
	if rec.Op != cdc.OpUpdate {
		t.Errorf("Op=%v", rec.Op)
	}
}

func TestNewGoldenGateDefaults(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	want := cdc.GoldenGateNames{QualTable: "qual_table", OpType: "op_type", OpTS: "op_ts", XID: "xid", Pos: "pos",
		Before: "before", After: "after", Insert: "INSERT", Update: "UPDATE", Delete: "DELETE", Upsert: "UPSERT"}
	if got := d.Names(); got != want {
		t.Errorf("Names() = %+v, want %+v", got, want)
	}
}

func TestNewGoldenGateRejectsAmbiguousNames(t *testing.T) {
	bad := []cdc.GoldenGateNames{
		{Before: "image", After: "image"},
		{QualTable: "after"},        // collides with the default after
		{XID: "pos"},                // collides with the default pos
		{OpTS: "op_type"},           // collides with the default op_type
		{Pos: "x", XID: "x"},        // two renamed fields collide
		{Insert: "X", Update: "X"},  // two op strings collide
		{Insert: "UPDATE"},          // collides with the default UPDATE
		{Upsert: "DELETE"},          // collides with the default DELETE
		{Delete: "DDL"},             // names a record class
		{Insert: "OBJECT_METADATA"}, // names a record class
		{Upsert: "STREAM_METADATA"}, // names a record class
	}
	for _, names := range bad {
		d, err := cdc.NewGoldenGate(names)
		if err == nil || d != nil {
			t.Errorf("NewGoldenGate(%+v) = %v, %v; want an error", names, d, err)
		}
	}
	// swapping two defaults is unambiguous
	if _, err := cdc.NewGoldenGate(cdc.GoldenGateNames{Before: "after", After: "before"}); err != nil {
		t.Errorf("swapped before/after: %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	const ts = `"op_ts":"2026-07-13T04:00:00Z"`
	cases := []struct {
		name string
		in   string
		want cdc.Reason
	}{
		{"empty input", ``, cdc.ReasonMalformedJSON},
		{"whitespace", "  \n", cdc.ReasonMalformedJSON},
		{"truncated", `{"qual_table":"S.T","op_type":"INSERT",`, cdc.ReasonMalformedJSON},
		{"truncated reference record", refInsert[:len(refInsert)-2], cdc.ReasonMalformedJSON},
		{"trailing garbage", refInsert + `}`, cdc.ReasonMalformedJSON},
		{"two records", refInsert + refInsert, cdc.ReasonMalformedJSON},
		{"single quotes", `{'op_type':'INSERT'}`, cdc.ReasonMalformedJSON},
		{"unquoted key", `{op_type:"INSERT"}`, cdc.ReasonMalformedJSON},
		{"trailing comma", `{"op_type":"STREAM_METADATA",}`, cdc.ReasonMalformedJSON},
		{"bad escape", `{"op_type":"STREAM_METADATA","x":"\q"}`, cdc.ReasonMalformedJSON},
		{"raw control char in string", "{\"op_type\":\"STREAM_METADATA\",\"x\":\"a\x01b\"}", cdc.ReasonMalformedJSON},
		{"NaN", `{"qual_table":"S.T","op_type":"INSERT",` + ts + `,"after":{"A":NaN}}`, cdc.ReasonMalformedJSON},
		{"xid an object", `{"qual_table":"S.T","op_type":"INSERT",` + ts + `,"xid":{"a":1},"after":{"A":1}}`, cdc.ReasonMalformedJSON},
		{"pos an array", `{"qual_table":"S.T","op_type":"INSERT",` + ts + `,"pos":[1,2],"after":{"A":1}}`, cdc.ReasonMalformedJSON},
		{"DDL pos an object", `{"op_type":"DDL","qual_table":"S.T",` + ts + `,"pos":{},"ddl":{"statement":"ALTER TABLE S.T ADD B NUMBER"}}`, cdc.ReasonMalformedJSON},

		{"array", `[{"op_type":"INSERT"}]`, cdc.ReasonMalformedJSON},
		{"string", `"INSERT"`, cdc.ReasonMalformedJSON},
		{"number", `42`, cdc.ReasonMalformedJSON},
		{"null", `null`, cdc.ReasonMalformedJSON},
		{"bool", `true`, cdc.ReasonMalformedJSON},

		{"unknown op", `{"qual_table":"S.T","op_type":"MERGE",` + ts + `,"after":{"A":1}}`, cdc.ReasonUnknownOp},
		{"op is case-sensitive", `{"qual_table":"S.T","op_type":"insert",` + ts + `,"after":{"A":1}}`, cdc.ReasonUnknownOp},
		{"empty op", `{"qual_table":"S.T","op_type":"",` + ts + `,"after":{"A":1}}`, cdc.ReasonUnknownOp},
		{"op with space", `{"qual_table":"S.T","op_type":"INSERT ",` + ts + `,"after":{"A":1}}`, cdc.ReasonUnknownOp},

		{"missing op_type", `{"qual_table":"S.T",` + ts + `,"after":{"A":1}}`, cdc.ReasonMissingField},
		{"empty object", `{}`, cdc.ReasonMissingField},
		{"null op_type", `{"qual_table":"S.T","op_type":null,` + ts + `,"after":{"A":1}}`, cdc.ReasonMissingField},

		{"missing op_ts", `{"qual_table":"S.T","op_type":"INSERT","after":{"A":1}}`, cdc.ReasonBadOpTS},
		{"null op_ts", `{"qual_table":"S.T","op_type":"UPDATE","op_ts":null,"before":{"A":1},"after":{"A":1}}`, cdc.ReasonBadOpTS},
		{"numeric op_ts", `{"qual_table":"S.T","op_type":"DELETE","op_ts":1783915261,"before":{"A":1}}`, cdc.ReasonBadOpTS},
		{"garbage op_ts", `{"qual_table":"S.T","op_type":"INSERT","op_ts":"yesterday","after":{"A":1}}`, cdc.ReasonBadOpTS},
		{"Feb 30 op_ts", `{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-02-30T00:00:00Z","after":{"A":1}}`, cdc.ReasonBadOpTS},
		{"empty op_ts", `{"qual_table":"S.T","op_type":"UPSERT","op_ts":"","after":{"A":1}}`, cdc.ReasonBadOpTS},
		{"object op_ts", `{"qual_table":"S.T","op_type":"UPSERT","op_ts":{},"after":{"A":1}}`, cdc.ReasonBadOpTS},

		{"UPDATE without after", `{"qual_table":"S.T","op_type":"UPDATE",` + ts + `,"before":{"A":1}}`, cdc.ReasonMissingImage},
		{"UPDATE with null after", `{"qual_table":"S.T","op_type":"UPDATE",` + ts + `,"before":{"A":1},"after":null}`, cdc.ReasonMissingImage},
		{"DELETE without before", `{"qual_table":"S.T","op_type":"DELETE",` + ts + `,"after":{"A":1}}`, cdc.ReasonMissingImage},
		{"DELETE with no image", `{"qual_table":"S.T","op_type":"DELETE",` + ts + `}`, cdc.ReasonMissingImage},
		{"INSERT without after", `{"qual_table":"S.T","op_type":"INSERT",` + ts + `,"before":{"A":1}}`, cdc.ReasonMissingImage},
		{"UPSERT without after", `{"qual_table":"S.T","op_type":"UPSERT",` + ts + `}`, cdc.ReasonMissingImage},

		{"DML without table", `{"op_type":"INSERT",` + ts + `,"after":{"A":1}}`, cdc.ReasonBadTableName},
		{"DML with empty table", `{"qual_table":"","op_type":"INSERT",` + ts + `,"after":{"A":1}}`, cdc.ReasonBadTableName},
		{"DML with numeric table", `{"qual_table":7,"op_type":"INSERT",` + ts + `,"after":{"A":1}}`, cdc.ReasonBadTableName},

		{"metadata without columns", `{"op_type":"OBJECT_METADATA","qual_table":"S.T"}`, cdc.ReasonBadMetadata},
		{"metadata with duplicate columns", `{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"A":{},"A":{}}}`, cdc.ReasonBadMetadata},
		{"DDL without ddl", `{"op_type":"DDL",` + ts + `}`, cdc.ReasonMissingField},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantReject(t, d, c.in, c.want) })
	}
}

func TestRejectError(t *testing.T) {
	re := cdc.Rejectf(cdc.ReasonUnknownOp, "op %q", "MERGE")
	if re.Reason != cdc.ReasonUnknownOp || re.Detail != `op "MERGE"` {
		t.Errorf("Rejectf = %+v", re)
	}
	if re.Error() != `unknown_op_type: op "MERGE"` {
		t.Errorf("Error() = %q", re.Error())
	}
	wrapped := fmt.Errorf("record at 3: %w", re)
	if got, ok := cdc.AsReject(wrapped); !ok || got != re {
		t.Errorf("AsReject(wrapped) = %v, %v", got, ok)
	}
	if _, ok := cdc.AsReject(errors.New("io")); ok {
		t.Errorf("AsReject of a plain error reports a reject")
	}
	if _, ok := cdc.AsReject(nil); ok {
		t.Errorf("AsReject(nil) reports a reject")
	}
}

func TestRecordReuse(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	var rec cdc.Record

	big := `{"qual_table":"SALES.ORDERS","op_type":"UPDATE","op_ts":"2026-07-13T04:02:12Z","xid":"x1","pos":"p1",
		"before":{"A":1,"B":2,"C":3,"D":4},"after":{"A":1,"B":2,"C":3,"D":5,"E":6}}`
	if err := d.Decode([]byte(big), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Before.Fields) != 4 || len(rec.After.Fields) != 5 {
		t.Fatalf("first record: before %d after %d fields", len(rec.Before.Fields), len(rec.After.Fields))
	}

	// A smaller DML: no field of the first may survive.
	small := `{"qual_table":"HR.EMP","op_type":"INSERT","op_ts":"2026-07-14T00:00:00Z","after":{"Z":9}}`
	if err := d.Decode([]byte(small), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Table != "HR.EMP" || rec.Op != cdc.OpInsert || rec.OpType != "INSERT" {
		t.Errorf("Table=%q Op=%v OpType=%q", rec.Table, rec.Op, rec.OpType)
	}
	if rec.HasXID || rec.XID != "" || rec.HasPos || rec.Pos != "" {
		t.Errorf("xid/pos leaked from the first record: %q %v %q %v", rec.XID, rec.HasXID, rec.Pos, rec.HasPos)
	}
	wantImage(t, "before", &rec.Before, nil)
	wantImage(t, "after", &rec.After, []field{{"Z", "9", cdc.TypeNumber}})
	wantTime(t, "OpTS", rec.OpTS, utc(2026, 7, 14, 0, 0, 0, 0))

	// Metadata, then DDL, then a schema record, then stream metadata.
	if err := d.Decode([]byte(refObjectMetadata), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Op != 0 || rec.OpType != "OBJECT_METADATA" || rec.HasOpTS || !rec.OpTS.IsZero() || rec.After.Present || len(rec.After.Fields) != 0 {
		t.Errorf("metadata record keeps DML state: %+v", rec)
	}
	if err := d.Decode([]byte(refDDL), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Metadata.Columns) != 0 || rec.Metadata.Table != "" {
		t.Errorf("DDL record keeps metadata: %+v", rec.Metadata)
	}
	if err := d.Decode([]byte(refSchema), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Table != "" || rec.DDL != (cdc.DDL{}) || rec.HasOpTS || rec.HasXID || rec.HasPos || rec.OpType != "" || rec.Class != cdc.ClassSchema {
		t.Errorf("schema record keeps DDL state: %+v", rec)
	}
	if err := d.Decode([]byte(refStreamMetadata), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.SchemaID != "" || rec.Class != cdc.ClassStreamMetadata {
		t.Errorf("stream metadata keeps SchemaID %q", rec.SchemaID)
	}

	// Every field is cleared by a decode, whatever a previous user left.
	rec.Qlik = cdc.QlikHeaders{ChangeSeq: "1", HasEventCounter: true, EventCounter: 3}
	rec.SchemaID = "stale"
	rec.DDL.Statement = "stale"
	if err := d.Decode([]byte(refDelete), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Qlik != (cdc.QlikHeaders{}) || rec.SchemaID != "" || rec.DDL != (cdc.DDL{}) {
		t.Errorf("stale fields survive a decode: Qlik=%+v SchemaID=%q DDL=%+v", rec.Qlik, rec.SchemaID, rec.DDL)
	}
	wantImage(t, "after", &rec.After, nil)
	wantImage(t, "before", &rec.Before, []field{{"ORDER_ID", "1001", cdc.TypeNumber}, {"STATUS", "APPROVED", cdc.TypeString}})

	// Decoding into a reused record gives what decoding into a fresh one does.
	for _, in := range []string{refInsert, refUpdate, refDelete, refUpsert, refDDL, refObjectMetadata, refSchema, refCloudEvent} {
		var fresh cdc.Record
		if err := d.Decode([]byte(in), &fresh); err != nil {
			t.Fatal(err)
		}
		if err := d.Decode([]byte(in), &rec); err != nil {
			t.Fatal(err)
		}
		if a, b := summary(&fresh), summary(&rec); a != b {
			t.Errorf("reused record differs from fresh one:\nfresh  %s\nreused %s", a, b)
		}
	}
}

func summary(r *cdc.Record) string {
	return fmt.Sprintf("%v|%q|%v|%q|%v|%v|%q|%v|%q|%v|%v|%v|%v|%+v|%+v|%q|%s",
		r.Class, r.Table, r.Op, r.OpType, r.OpTS, r.HasOpTS, r.XID, r.HasXID, r.Pos, r.HasPos,
		r.Before.Present, fieldsOf(&r.Before), fieldsOf(&r.After), r.Metadata, r.DDL, r.SchemaID, r.Body)
}

func TestFieldText(t *testing.T) {
	cases := []struct {
		raw  string // the text between the quotes of a JSON string
		want string
	}{
		{`plain`, "plain"},
		{``, ""},
		{`a\"b`, `a"b`},
		{`back\\slash`, `back\slash`},
		{`\/`, "/"},
		{`caf\u00e9`, "café"},
		{`caf\u00E9`, "café"},
		{`\u20ac\u0041`, "€A"},
		{`\ud83d\ude00`, "😀"},
		{`\b\f\n\r\t`, "\b\f\n\r\t"},
		{`\u0000`, "\x00"},
		{`raw é stays`, "raw é stays"},
		{`\\u00e9`, `\u00e9`},
	}
	for _, c := range cases {
		var want string
		if err := json.Unmarshal([]byte(`"`+c.raw+`"`), &want); err != nil || want != c.want {
			t.Fatalf("test table: %q decodes to %q (%v) per encoding/json, not %q", c.raw, want, err, c.want)
		}
		f := cdc.Field{Name: "S", Value: []byte(c.raw), Type: cdc.TypeString}
		got, err := f.Text(nil)
		if err != nil || string(got) != c.want {
			t.Errorf("Text(%q) = %q, %v; want %q", c.raw, got, err, c.want)
		}
		buf := make([]byte, 0, 64)
		got, err = f.Text(buf)
		if err != nil || string(got) != c.want {
			t.Errorf("Text(%q, buf) = %q, %v; want %q", c.raw, got, err, c.want)
		}
		if strings.Contains(c.raw, `\`) && len(got) > 0 && &got[0] != &buf[:1][0] {
			t.Errorf("Text(%q, buf) did not use the scratch buffer", c.raw)
		}
	}

	// Without escapes the value itself is returned, no copy.
	f := cdc.Field{Value: []byte("NEW"), Type: cdc.TypeString}
	if got, _ := f.Text(nil); &got[0] != &f.Value[0] {
		t.Errorf("Text copied an unescaped value")
	}
	// Other types return their raw JSON text, even if it has backslashes.
	for _, f := range []cdc.Field{
		{Value: []byte("125.50"), Type: cdc.TypeNumber},
		{Value: []byte("true"), Type: cdc.TypeBool},
		{Value: []byte("null"), Type: cdc.TypeNull},
		{Value: []byte(`{"a":"\u00e9"}`), Type: cdc.TypeObject},
		{Value: []byte(`["\""]`), Type: cdc.TypeArray},
	} {
		if got, err := f.Text(nil); err != nil || string(got) != string(f.Value) {
			t.Errorf("Text of %v %s = %q, %v", f.Type, f.Value, got, err)
		}
	}
	// Broken escapes are errors, not garbage.
	for _, raw := range []string{`\q`, `\u12`, `\u12G4`, `abc\`} {
		f := cdc.Field{Value: []byte(raw), Type: cdc.TypeString}
		if got, err := f.Text(nil); err == nil {
			t.Errorf("Text(%q) = %q, want an error", raw, got)
		}
	}
}

func TestEnumStrings(t *testing.T) {
	ops := map[cdc.Op]string{cdc.OpInsert: "INSERT", cdc.OpUpdate: "UPDATE", cdc.OpDelete: "DELETE", cdc.OpUpsert: "UPSERT", cdc.OpRefresh: "REFRESH", 0: "UNKNOWN", 99: "UNKNOWN"}
	for op, want := range ops {
		if op.String() != want {
			t.Errorf("Op(%d).String() = %q, want %q", op, op.String(), want)
		}
	}
	classes := map[cdc.Class]string{cdc.ClassDML: "dml", cdc.ClassObjectMetadata: "object_metadata", cdc.ClassDDL: "ddl",
		cdc.ClassStreamMetadata: "stream_metadata", cdc.ClassSchema: "schema", 0: "unknown"}
	for c, want := range classes {
		if c.String() != want {
			t.Errorf("Class(%d).String() = %q, want %q", c, c.String(), want)
		}
	}
}

func TestTableMetadataEqual(t *testing.T) {
	a := cdc.TableMetadata{Table: "S.T", Columns: []cdc.Column{{Name: "A", Type: "number", Key: true}, {Name: "B", Type: "string", Nullable: true}}}
	same := cdc.TableMetadata{Table: "S.T", Columns: append([]cdc.Column(nil), a.Columns...)}
	if !a.Equal(same) {
		t.Errorf("equal definitions compare unequal")
	}
	diff := []cdc.TableMetadata{
		{Table: "S.U", Columns: a.Columns},
		{Table: "S.T", Columns: a.Columns[:1]},
		{Table: "S.T", Columns: []cdc.Column{a.Columns[1], a.Columns[0]}},
		{Table: "S.T", Columns: []cdc.Column{a.Columns[0], {Name: "B", Type: "string", Nullable: false}}},
		{Table: "S.T", Columns: []cdc.Column{a.Columns[0], {Name: "B", Type: "number", Nullable: true}}},
		{Table: "S.T", Columns: []cdc.Column{a.Columns[0], {Name: "B", Type: "string", Nullable: true, Key: true}}},
	}
	for i, o := range diff {
		if a.Equal(o) || o.Equal(a) {
			t.Errorf("case %d: different definitions compare equal", i)
		}
	}
}

// TestDecodeManyColumns: duplicate detection must not be quadratic, and a
// wide table keeps every column in order.
func TestDecodeManyColumns(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	const n = 50000
	var b strings.Builder
	b.WriteString(`{"op_type":"OBJECT_METADATA","qual_table":"S.WIDE","columns":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"C` + strconv.Itoa(i) + `":{"type":"number"}`)
	}
	b.WriteString(`}}`)
	start := time.Now()
	rec := decodeOK(t, d, b.String())
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("decoding %d columns took %v", n, el)
	}
	if len(rec.Metadata.Columns) != n || rec.Metadata.Columns[n-1].Name != "C"+strconv.Itoa(n-1) {
		t.Errorf("got %d columns", len(rec.Metadata.Columns))
	}
}

// Renamed to "type", the op-type field shares its name with the schema
// records' and the CloudEvents envelope's own type: those keep their
// meaning, and the records' op types are still read.
func TestOpTypeFieldNamedType(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{OpType: "type"})
	for name, in := range map[string]string{
		"with $schema":    `{"$schema":"http://json-schema.org/draft-04/schema#","id":"R.T","type":"object","properties":{"after":{"type":"object"}}}`,
		"without $schema": `{"id":"R.T","type":"object","properties":{"after":{"type":"object"}}}`,
	} {
		if rec := decodeOK(t, d, in); rec.Class != cdc.ClassSchema || rec.SchemaID != "R.T" {
			t.Errorf("schema record %s: class %v id %q, want a schema record of R.T", name, rec.Class, rec.SchemaID)
		}
	}
	const insert = `{"qual_table":"R.T","type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ID":1}}`
	for name, in := range map[string]string{
		"bare":        insert,
		"CloudEvents": `{"specversion":"1.0","type":"com.example.dml","source":"gg","id":"e1","data":` + insert + `}`,
	} {
		if rec := decodeOK(t, d, in); rec.Class != cdc.ClassDML || rec.Op != cdc.OpInsert || rec.Table != "R.T" {
			t.Errorf("%s insert: class %v op %v table %q", name, rec.Class, rec.Op, rec.Table)
		}
	}
	if rec := decodeOK(t, d, `{"type":"OBJECT_METADATA","qual_table":"R.T","columns":{"ID":{"type":"number"}}}`); rec.Class != cdc.ClassObjectMetadata {
		t.Errorf("metadata: class %v", rec.Class)
	}
	wantReject(t, d, `{"qual_table":"R.T","type":"MERGE","op_ts":"2026-07-13T04:00:00Z","after":{"ID":1}}`, cdc.ReasonUnknownOp)
}

// TestOpTSOutsideSparkDatesIsRefused: an op_ts whose UTC date is before
// 0001-01-01 or after 9999-12-31 is refused as bad_op_ts, in every kind of
// record, so that no date folder gets a year 0 or 10000; the ends of the
// range are taken.
func TestOpTSOutsideSparkDatesIsRefused(t *testing.T) {
	d := newDecoder(t, cdc.GoldenGateNames{})
	for _, ts := range []string{"9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "0000-06-01T00:00:00Z", "9999-12-31T23:00:00.5-0100"} {
		wantReject(t, d, `{"qual_table":"S.T","op_type":"INSERT","op_ts":"`+ts+`","after":{"A":1}}`, cdc.ReasonBadOpTS)
		wantReject(t, d, `{"op_type":"OBJECT_METADATA","qual_table":"S.T","op_ts":"`+ts+`","columns":{"A":{}}}`, cdc.ReasonBadOpTS)
		wantReject(t, d, wrapCE(`{"qual_table":"S.T","op_type":"DELETE","op_ts":"`+ts+`","before":{"A":1}}`), cdc.ReasonBadOpTS)
	}
	for ts, want := range map[string]time.Time{
		"9999-12-31T23:59:59.999999Z": utc(9999, 12, 31, 23, 59, 59, 999999000),
		"9999-12-31T23:59:59+01:00":   utc(9999, 12, 31, 22, 59, 59, 0),
		"0001-01-01T00:00:00Z":        utc(1, 1, 1, 0, 0, 0, 0),
		"0001-01-01T00:30:00+00:30":   utc(1, 1, 1, 0, 0, 0, 0),
	} {
		rec := decodeOK(t, d, `{"qual_table":"S.T","op_type":"INSERT","op_ts":"`+ts+`","after":{"A":1}}`)
		wantTime(t, "OpTS of "+ts, rec.OpTS, want)
	}
}

// TestTextRefusesUnpairedSurrogates: a string escaping half of a UTF-16
// pair names no character; unescaped it would become U+FFFD, a value the
// source never held. Pairs, and text that only looks like an escape, are
// kept.
func TestTextRefusesUnpairedSurrogates(t *testing.T) {
	for raw, want := range map[string]string{
		`\ud83d\ude00`:    "😀",
		`a\\ud800`:        `a\ud800`,
		`\u00e9\n`:        "é\n",
		`x\\\ud83d\ude00`: `x\😀`,
	} {
		f := cdc.Field{Type: cdc.TypeString, Value: []byte(raw)}
		got, err := f.Text(nil)
		if err != nil || string(got) != want {
			t.Errorf("Text(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{`\ud800`, `\udc00`, `a\ud800`, `\ud800\u0041`, `\ud83d\ud83d`, `\\\ud800`, `\ude00\ud83d`} {
		f := cdc.Field{Type: cdc.TypeString, Value: []byte(raw)}
		if got, err := f.Text(nil); err == nil {
			t.Errorf("Text(%s) = %q, want an error", raw, got)
		}
	}
}

// TestNamesRefuseUnpairedSurrogates: the table, a column, xid and pos
// escaping half of a UTF-16 pair are refused like such a value: unescaped
// as U+FFFD, two tables or positions would read alike. A pair is kept.
func TestNamesRefuseUnpairedSurrogates(t *testing.T) {
	d, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	for _, in := range []string{
		`{"qual_table":"S.T\ud800","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`,
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"A\udc00":1}}`,
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","xid":"x\ud800","after":{"A":1}}`,
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","pos":"p\udc00","after":{"A":1}}`,
	} {
		wantReject(t, d, in, cdc.ReasonMalformedJSON)
	}
	rec := decodeOK(t, d, `{"qual_table":"S.T\ud83d\ude00","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","pos":"p\ud83d\ude00","after":{"A\u00e9":1}}`)
	if rec.Table != "S.T😀" || rec.Pos != "p😀" || rec.After.Fields[0].Name != "Aé" {
		t.Errorf("table %q, pos %q, column %q; want the pairs and escapes unescaped", rec.Table, rec.Pos, rec.After.Fields[0].Name)
	}
}

// TestDuplicateFieldsAreRefused: a record that gives a field of the change
// twice (two op_type, two after images) is refused: which the source
// meant is unknown.
func TestDuplicateFieldsAreRefused(t *testing.T) {
	d, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	for _, in := range []string{
		`{"qual_table":"S.T","op_type":"INSERT","op_type":"DELETE","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`,
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","op_ts":"2026-07-20T04:00:00Z","after":{"A":1}}`,
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"A":1},"after":{"A":2}}`,
		`{"qual_table":"S.T","qual_table":"S.U","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`,
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","pos":"1","pos":"2","after":{"A":1}}`,
	} {
		wantReject(t, d, in, cdc.ReasonMalformedJSON)
	}
}

// TestMetadataNamesRefuseUnpairedSurrogates: a table named by its
// catalog/schema/table fields, a metadata column and a DDL's object
// escaping half of a surrogate pair are refused too.
func TestMetadataNamesRefuseUnpairedSurrogates(t *testing.T) {
	d, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	for in, want := range map[string]cdc.Reason{
		`{"catalog":"C","schema":"S\ud800","table":"T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"A":1}}`:                                                cdc.ReasonMalformedJSON,
		`{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{"A\udc00\u0041":{"type":"string"}}}`:                                                                  cdc.ReasonBadMetadata,
		`{"qual_table":"S.T","op_type":"DDL","op_ts":"2026-07-13T04:00:00Z","ddl":{"object":{"schema":"S\ud800","object":"T"},"statement":"ALTER TABLE T ADD B NUMBER"}}`: cdc.ReasonMalformedJSON,
	} {
		wantReject(t, d, in, want)
	}
}
