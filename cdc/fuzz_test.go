package cdc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// knownReasons is the fixed set of reject reasons (a metric label).
var knownReasons = map[cdc.Reason]bool{
	cdc.ReasonMalformedJSON: true, cdc.ReasonUnknownOp: true, cdc.ReasonMissingField: true,
	cdc.ReasonBadOpTS: true, cdc.ReasonNoMetadata: true, cdc.ReasonValueMismatch: true,
	cdc.ReasonUnknownColumn: true, cdc.ReasonMissingImage: true, cdc.ReasonBadTableName: true,
	cdc.ReasonBadMetadata: true, cdc.ReasonOversized: true,
}

// FuzzGoldenGateDecode feeds arbitrary bytes to the GoldenGate decoder.
//
// Invariants checked for every input:
//   - Decode never panics.
//   - A failed decode returns a *cdc.RejectError (not a wrapped or foreign
//     error) with a non-empty reason from the fixed set and a detail.
//   - A successful decode has a known Class and a Body that is a JSON
//     object.
//   - A successful decode of a DML record has a non-empty table, a known Op
//     (INSERT, UPDATE, DELETE or UPSERT), a present row image (after, or
//     before for DELETE), an op_ts in UTC, and string fields whose Text is
//     what encoding/json makes of them.
//   - A successful OBJECT_METADATA record has a table and at least one
//     column, with no name twice; a DDL record has a table; a schema record
//     has an id.
//   - Decoding into a reused Record gives the same result as decoding into
//     a fresh one, and decoding is deterministic.
//
// The seed corpus is every example record of the Data Streams payload
// reference, plus the other record classes and broken variants.
func FuzzGoldenGateDecode(f *testing.F) {
	seeds := []string{
		// reference examples
		refSchema, refStreamMetadata, refObjectMetadata, refInsert, refUpdate, refDelete, refUpsert, refDDL, refCloudEvent,
		// other shapes that decode
		wrapCEString(refUpdate),
		wrapCE(refDDL),
		wrapCEString(refObjectMetadata),
		`{"id":"SALES.ORDERS","properties":{"A":{"type":"integer"}}}`,
		`{"qual_table":"S.\"T\"","op_type":"INSERT","op_ts":"2026-07-13T01:30:00+02:00","pos":"a\\b\u00e9\ud83d\ude00","after":{"K\u0042":"x\"y","N":1e400,"Z":null,"O":{"a":[1]}}}`,
		`{"catalog":"","schema":"S","table":"T","op_type":"UPSERT","op_ts":"2026-07-13 04:00:00.123456789","after":{}}`,
		// broken variants
		``, `{`, `}`, `[]`, `null`, `"x"`, `{}`, `{"op_type":1}`,
		refInsert[:len(refInsert)/2],
		strings.Replace(refInsert, `"INSERT"`, `"MERGE"`, 1),
		strings.Replace(refInsert, `"op_ts": "2026-07-13T04:01:01.123456Z",`, ``, 1),
		strings.Replace(refInsert, `2026-07-13T04:01:01.123456Z`, `2026-02-30T04:01:01Z`, 1),
		strings.Replace(refUpdate, `"after"`, `"afterx"`, 1),
		strings.Replace(refDelete, `"before"`, `"after"`, 1),
		strings.Replace(refObjectMetadata, `"STATUS"`, `"ORDER_ID"`, 1),
		`{"op_type":"OBJECT_METADATA","qual_table":"S.T","columns":{}}`,
		`{"op_type":"DDL","ddl":{"object":{"catalog":"","schema":"","object":""}}}`,
		`{"specversion":"1.0","data":"{\"specversion\":\"1.0\",\"data\":{}}"}`,
		`{"specversion":"1.0","data":"{\"op_type\":\"INSERT\""}`,
		`{"$schema":"x","id":7}`,
		`{"qual_table":"S.T","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"\ud800":"\udc00"}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}

	d, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		f.Fatal(err)
	}
	var reused cdc.Record
	// Dirty the reused record once so the first comparison means something.
	if err := d.Decode([]byte(refUpdate), &reused); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		in := append([]byte(nil), data...)
		var rec cdc.Record
		err := d.Decode(data, &rec)
		if !bytes.Equal(in, data) {
			t.Fatalf("Decode modified its input")
		}
		err2 := d.Decode(data, &reused)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("fresh record: %v; reused record: %v", err, err2)
		}
		if err != nil {
			re := checkReject(t, err, knownReasons)
			var re2 *cdc.RejectError
			if !errors.As(err2, &re2) || re2.Reason != re.Reason {
				t.Fatalf("decode is not deterministic: %v then %v", err, err2)
			}
			return
		}
		if a, b := summary(&rec), summary(&reused); a != b {
			t.Fatalf("reused record differs from a fresh one:\nfresh  %s\nreused %s", a, b)
		}
		checkBody(t, &rec)

		switch rec.Class {
		case cdc.ClassDML:
			checkDML(t, &rec, cdc.OpInsert, cdc.OpUpdate, cdc.OpDelete, cdc.OpUpsert)
			if (rec.Op == cdc.OpDelete) != (rec.RowImage() == &rec.Before) {
				t.Fatalf("%v uses the wrong row image", rec.Op)
			}
			if !rec.HasOpTS || rec.OpTS.Location() != time.UTC {
				t.Fatalf("DML op_ts %v (has %v) is not a UTC time", rec.OpTS, rec.HasOpTS)
			}
			for _, im := range []*cdc.Image{&rec.Before, &rec.After} {
				if !im.Present && len(im.Fields) > 0 {
					t.Fatalf("absent image with %d fields", len(im.Fields))
				}
				for i := range im.Fields {
					checkField(t, &im.Fields[i])
				}
			}
		case cdc.ClassObjectMetadata:
			if rec.Table == "" || rec.Metadata.Table != rec.Table {
				t.Fatalf("metadata table %q / %q", rec.Table, rec.Metadata.Table)
			}
			if len(rec.Metadata.Columns) == 0 {
				t.Fatalf("metadata without columns")
			}
			seen := map[string]bool{}
			for _, c := range rec.Metadata.Columns {
				if seen[c.Name] {
					t.Fatalf("column %q listed twice", c.Name)
				}
				seen[c.Name] = true
			}
		case cdc.ClassDDL:
			if rec.Table == "" {
				t.Fatalf("DDL without a table")
			}
		case cdc.ClassSchema:
			if rec.SchemaID == "" {
				t.Fatalf("schema record without an id")
			}
		case cdc.ClassStreamMetadata:
		default:
			t.Fatalf("decoded a record of class %v", rec.Class)
		}
		if rec.Class != cdc.ClassDML && (rec.Op != 0 || rec.Before.Present || rec.After.Present) {
			t.Fatalf("%v record carries DML state", rec.Class)
		}
	})
}

// checkField: the type matches the raw text, and Text of a string is what
// encoding/json decodes (for valid UTF-8; encoding/json rewrites invalid
// bytes to U+FFFD where Text keeps them).
func checkField(t *testing.T, f *cdc.Field) {
	t.Helper()
	if f.Type == cdc.TypeString {
		txt, err := f.Text(nil)
		if err != nil {
			// Only for an unpaired surrogate escape, which encoding/json
			// turns into U+FFFD.
			var decoded string
			jerr := json.Unmarshal([]byte(`"`+string(f.Value)+`"`), &decoded)
			if jerr != nil || !strings.ContainsRune(decoded, utf8.RuneError) || bytes.Contains(bytes.ToLower(f.Value), []byte(`\ufffd`)) || bytes.Contains(f.Value, []byte("\uFFFD")) {
				t.Fatalf("Text of %q: %v", f.Value, err)
			}
			return
		}
		if utf8.Valid(f.Value) {
			var want string
			if err := json.Unmarshal([]byte(`"`+string(f.Value)+`"`), &want); err != nil {
				t.Fatalf("string field %q is not a JSON string body: %v", f.Value, err)
			}
			if string(txt) != want {
				t.Fatalf("Text(%q) = %q, encoding/json says %q", f.Value, txt, want)
			}
		}
		return
	}
	var v any
	if err := json.Unmarshal(f.Value, &v); err != nil {
		// numbers past float64 range still are valid JSON numbers
		if f.Type != cdc.TypeNumber || !json.Valid(f.Value) {
			t.Fatalf("field %q of type %v is not JSON: %v", f.Value, f.Type, err)
		}
		return
	}
	var want cdc.ValueType
	switch v.(type) {
	case nil:
		want = cdc.TypeNull
	case bool:
		want = cdc.TypeBool
	case float64:
		want = cdc.TypeNumber
	case map[string]any:
		want = cdc.TypeObject
	case []any:
		want = cdc.TypeArray
	}
	if f.Type != want {
		t.Fatalf("field %q has type %v, want %v", f.Value, f.Type, want)
	}
}
