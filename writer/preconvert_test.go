package writer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

const preTypesMetadata = `{"op_type":"OBJECT_METADATA","qual_table":"A.PRE","columns":{
  "ID":{"type":"number"},"S":{"type":"string"},"BIN":{"type":"string"},"TS":{"type":"string"},"N":{"type":"number"}}}`

func preFixture(t *testing.T) *fixture {
	return newFixture(t, arrowschema.Options{BeforeImage: true, Hints: map[string]arrowschema.Type{
		"*:ID": {Kind: arrowschema.KindInt64}, "*:BIN": {Kind: arrowschema.KindBinary},
		"*:TS": {Kind: arrowschema.KindTimestamp}, "*:N": {Kind: arrowschema.KindDecimal, Precision: 10, Scale: 2},
	}})
}

// preRecords are row changes whose strings and binaries are escaped (so
// converted into the arena, not pointing into the record), with before
// images, and every seventh one a value its column refuses.
func preRecords(f *fixture, n int) []*cdc.Record {
	var recs []*cdc.Record
	for _, text := range preRecordTexts(n) {
		recs = append(recs, f.rec(text))
	}
	return recs
}

func preRecordTexts(n int) []string {
	var texts []string
	for i := range n {
		bin := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(i), 0xff, 0xfe}, 1+i%5))
		bin = strings.ReplaceAll(bin, "/", `\/`) // JSON may escape a slash
		num := fmt.Sprintf("%d.%02d", i, i%100)
		if i%7 == 3 {
			num = `"lots"`
		}
		after := fmt.Sprintf(`{"ID":%d,"S":"r\u00e9c \"%d\"\n%s","BIN":"%s","TS":"2026-07-13T04:%02d:00.%06dZ","N":%s}`,
			i, i, strings.Repeat("x", i%40), bin, i%60, i, num)
		op, before := "INSERT", ""
		if i%3 == 1 {
			op, before = "UPDATE", fmt.Sprintf(`,"before":{"ID":%d,"S":"old\t%d","BIN":null}`, i, i)
		}
		texts = append(texts, fmt.Sprintf(`{"qual_table":"A.PRE","op_type":"%s","op_ts":"2026-07-13T04:00:00Z","pos":"p%d"%s,"after":%s}`,
			op, i, before, after))
	}
	return texts
}

// convertAhead converts every record under v before any is appended.
func convertAhead(v *arrowschema.Version, recs []*cdc.Record) []Converted {
	p := NewPreconverter()
	pre := make([]Converted, len(recs))
	for i, r := range recs {
		p.Convert(v, r, &pre[i])
	}
	return pre
}

// appendAll appends recs under v, converted ahead (pre) or not, and
// returns the file's bytes and each record's error text.
func appendAll(t *testing.T, v *arrowschema.Version, recs []*cdc.Record, pre []Converted) ([]byte, []string) {
	t.Helper()
	w := newWriter(t, Config{})
	var errs []string
	for i, r := range recs {
		var err error
		if pre != nil {
			_, err = w.AppendConverted(v, r, Source{Partition: "p0", Offset: int64(i)}, &pre[i])
		} else {
			_, err = w.Append(v, r, Source{Partition: "p0", Offset: int64(i)})
		}
		errs = append(errs, fmt.Sprint(err))
	}
	files := mustFlushAll(t, w)
	if len(files) != 1 {
		t.Fatalf("%d files, want 1", len(files))
	}
	return files[0].Data, errs
}

// TestPreconvertedRecordsWriteWhatAppendConverts: records converted ahead,
// all of them before the first is appended, write the same file (and are
// refused with the same errors) as records converted by Append, so no
// converted value shares memory with the next record's conversion.
func TestPreconvertedRecordsWriteWhatAppendConverts(t *testing.T) {
	f := preFixture(t)
	v := f.meta(preTypesMetadata)
	recs := preRecords(f, 300)
	pre := convertAhead(v, recs)
	got, gotErrs := appendAll(t, v, recs, pre)
	want, wantErrs := appendAll(t, v, recs, nil)
	rejected := 0
	for i := range recs {
		if gotErrs[i] != wantErrs[i] {
			t.Errorf("record %d: converted ahead %q, by Append %q", i, gotErrs[i], wantErrs[i])
		}
		if wantErrs[i] != "<nil>" {
			rejected++
		}
	}
	if rejected != 43 {
		t.Errorf("%d records refused, want 43 (every seventh)", rejected)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("converted ahead, the file differs from Append's (%d and %d bytes)", len(got), len(want))
	}
	pf := readParquet(t, got)
	bin := pf.col("BIN").(*array.Binary)
	if !bytes.Equal(bin.Value(2), bytes.Repeat([]byte{2, 0xff, 0xfe}, 3)) {
		t.Errorf("BIN of the third row = %x", bin.Value(2))
	}
	if s := pf.strings("S")[2]; s != "réc \"2\"\nxx" {
		t.Errorf("S of the third row = %q", s)
	}
}

// TestPreconvertedUnderAnotherVersionIsConvertedAgain: a record converted
// ahead under a version that is no longer in force (DDL came between) is
// converted by Append under the one passed; under the version it was
// converted with, Append takes the conversion as it is.
func TestPreconvertedUnderAnotherVersionIsConvertedAgain(t *testing.T) {
	f := preFixture(t)
	v1 := f.meta(preTypesMetadata)
	v2 := f.meta(strings.Replace(preTypesMetadata, `"N":{"type":"number"}`, `"N":{"type":"number"},"EXTRA":{"type":"string"}`, 1))
	if v1 == v2 || len(v2.Columns) != len(v1.Columns)+1 {
		t.Fatal("the second metadata did not open a new version")
	}
	recs := preRecords(f, 20)
	pre := convertAhead(v1, recs)
	got, gotErrs := appendAll(t, v2, recs, pre)
	want, wantErrs := appendAll(t, v2, recs, nil)
	if !bytes.Equal(got, want) || fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) {
		t.Fatal("converted under the old version, the records were not converted again under the new")
	}

	// Under its own version the conversion is used, not redone: the
	// first record's conversion, given with the second record, writes the
	// first record's values.
	w := newWriter(t, Config{})
	if _, err := w.AppendConverted(v1, recs[1], Source{Partition: "p0"}, &pre[0]); err != nil {
		t.Fatal(err)
	}
	if id := readParquet(t, mustFlushAll(t, w)[0].Data).col("ID").(*array.Int64).Value(0); id != 0 {
		t.Errorf("ID = %d, want 0: the conversion given was not used", id)
	}
}

// FuzzPreconvertedMatchesAppend: two records, both converted ahead before
// either is appended, are appended (or refused) exactly as Append
// converting each itself does: the same errors, the same file.
func FuzzPreconvertedMatchesAppend(f *testing.F) {
	texts := preRecordTexts(8)
	for i := 0; i+1 < len(texts); i++ {
		f.Add(texts[i], texts[i+1])
	}
	f.Add(`{"qual_table":"A.PRE","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"S":"\ud83d\ude00 \\","BIN":"3q2+7w==","ID":-9223372036854775808}}`,
		`{"qual_table":"A.PRE","op_type":"DELETE","op_ts":"2026-07-13T04:00:00Z","before":{"ID":1,"N":"12.345","TS":"2026-07-13T04:00:00.1234567Z"}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		fx := preFixture(t)
		v := fx.meta(preTypesMetadata)
		var recs []*cdc.Record
		for _, text := range []string{a, b} {
			var r cdc.Record
			if err := fx.dec.Decode([]byte(text), &r); err != nil || r.Class != cdc.ClassDML {
				return
			}
			recs = append(recs, &r)
		}
		pre := convertAhead(v, recs)
		w1, w2 := newWriter(t, Config{}), newWriter(t, Config{})
		for i, r := range recs {
			_, err1 := w1.AppendConverted(v, r, Source{Partition: "p0", Offset: int64(i)}, &pre[i])
			_, err2 := w2.Append(v, r, Source{Partition: "p0", Offset: int64(i)})
			if fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Fatalf("record %d: converted ahead %v, by Append %v", i, err1, err2)
			}
		}
		f1, f2 := mustFlushAll(t, w1), mustFlushAll(t, w2)
		if len(f1) != len(f2) {
			t.Fatalf("%d files converted ahead, %d by Append", len(f1), len(f2))
		}
		for i := range f1 {
			if !bytes.Equal(f1[i].Data, f2[i].Data) {
				t.Fatalf("file %d differs", i)
			}
		}
	})
}

// TestPreconvertDoesNotKeepALongRecordsArena: a record's conversion holds
// its memory until the record's place is reused, so a long escaped string
// must not leave its arena behind for every short record after it.
func TestPreconvertDoesNotKeepALongRecordsArena(t *testing.T) {
	f := preFixture(t)
	v := f.meta(preTypesMetadata)
	long := f.rec(`{"qual_table":"A.PRE","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ID":1,"S":"` +
		strings.Repeat(`\"`, 1<<20) + `"}}`)
	short := f.rec(`{"qual_table":"A.PRE","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ID":2,"S":"a\"b"}}`)
	p := NewPreconverter()
	var c Converted
	p.Convert(v, long, &c)
	if c.err != nil || len(c.row[1].bytes) != 1<<20 {
		t.Fatalf("long record: %v, %d bytes", c.err, len(c.row[1].bytes))
	}
	p.Convert(v, short, &c)
	if c.err != nil || string(c.row[1].bytes) != `a"b` {
		t.Fatalf("short record: %v, %q", c.err, c.row[1].bytes)
	}
	if cap(c.arena) > maxKeptArena {
		t.Errorf("the short record's arena holds %d bytes, the long one's", cap(c.arena))
	}
}
