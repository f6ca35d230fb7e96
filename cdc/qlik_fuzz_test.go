package cdc_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// qlikReasons is the fixed set of reject reasons the Qlik decoder may give.
var qlikReasons = map[cdc.Reason]bool{
	cdc.ReasonMalformedJSON: true, cdc.ReasonUnknownOp: true, cdc.ReasonMissingField: true,
	cdc.ReasonBadOpTS: true, cdc.ReasonMissingImage: true, cdc.ReasonBadTableName: true,
	cdc.ReasonBadMetadata: true, cdc.ReasonBadMask: true,
	cdc.ReasonValueMismatch: true, // a transaction header of the wrong type (badTransactionHeader)
}

// FuzzQlikDecode feeds arbitrary bytes to the Qlik Replicate decoder.
//
// Invariants checked for every input:
//   - Decode never panics.
//   - A failed decode returns a *cdc.RejectError (not a wrapped or foreign
//     error) with a non-empty reason from the fixed set, and a detail.
//   - Every decode, good or bad, leaves rec.Format == FormatQlik.
//   - A successful decode of a data message is ClassDML with a non-empty
//     Table, an Op in {INSERT, UPDATE, DELETE, REFRESH} whose String is the
//     OpType, a present row image (data, or beforeData for a DELETE that
//     has it), an OpTS in UTC unless the op is REFRESH, and change and
//     column masks that ParseMask accepts.
//   - A successful decode of a metadata message is ClassObjectMetadata with
//     a non-empty Table equal to Metadata.Table, Format qlik, and at least
//     one column, no name twice.
//   - Decoding into a reused Record gives the same result as decoding into
//     a fresh one, and cdc.Auto decodes the input the same way when it
//     picks the Qlik decoder.
//
// The seed corpus is every line of testdata/qlik/sample.jsonl, plus broken
// variants of them.
func FuzzQlikDecode(f *testing.F) {
	lines := readQlikSample(f)
	for _, l := range lines {
		f.Add([]byte(l))
	}
	for _, s := range []string{
		lines[3][:len(lines[3])/2],                                // truncated
		strings.Replace(lines[1], `"atMSG"`, `"atMsg"`, 1),        // bad magic
		strings.Replace(lines[1], `"type":"DT"`, `"type":"X"`, 1), // unknown type
		strings.Replace(lines[3], `"INSERT"`, `"MERGE"`, 1),       // unknown operation
		strings.Replace(lines[3], `"changeMask":"FF"`, `"changeMask":"FG"`, 1),
		strings.Replace(lines[3], `"timestamp":"2026-07-13T04:00:00.000"`, `"timestamp":""`, 1),
		strings.Replace(lines[4], `"beforeData":{`, `"beforeData":[{`, 1),
		strings.Replace(lines[6], `"data":{`, `"beforeData":{`, 1),
		strings.Replace(lines[0], `"ordinal":2`, `"ordinal":1`, 1),  // duplicate ordinal
		strings.Replace(lines[0], `"ordinal":3`, `"ordinal":30`, 1), // gap
		strings.Replace(lines[0], `"tableVersion":1`, `"tableVersion":null`, 1),
		`{"headers":{"operation":"REFRESH","transactionEventCounter":"7","transactionLastEvent":"True"},"data":{"A":"1"}}`,
		`{"headers":{"operation":"DELETE","timestamp":"2026-07-13T04:00:00Z","schema":"S","table":"T"},"data":{"A":null}}`,
		`{"lineage":{"schema":"S","table":"T"},"tableStructure":{"tableColumns":{"B":{"ordinal":2},"A":{"ordinal":1}}}}`,
		`{"magic":"atMSG","type":"MD","message":{}}`,
		`{"magic":"atMSG"}`,
		`{"op_type":"INSERT","headers":{"operation":"REFRESH"},"table":"T","data":{}}`,
		`{"he\u0061ders":{"operation":"REFRESH"},"table":"T","data":{}}`,
		`{}`, `[]`, `null`, ``,
		// found by the fuzzer: a transaction header that is not a number
		`{"magic":"atMSG","type":"DT","message":{"schema":"S","table":"T","data":{"A":"1"},"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00.000","transactionEventCounter":true}}}`,
	} {
		f.Add([]byte(s))
	}

	gg, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		f.Fatal(err)
	}
	d := cdc.NewQlik(cdc.QlikOptions{})
	auto := &cdc.Auto{GoldenGate: gg, Qlik: cdc.NewQlik(cdc.QlikOptions{})}
	var reused, autoRec cdc.Record

	f.Fuzz(func(t *testing.T, data []byte) {
		in := append([]byte(nil), data...)
		var rec cdc.Record
		err := cdc.NewQlik(cdc.QlikOptions{}).Decode(data, &rec)
		if !bytes.Equal(in, data) {
			t.Fatalf("Decode modified its input")
		}
		if rec.Format != cdc.FormatQlik {
			t.Fatalf("Format %v after a Qlik decode", rec.Format)
		}
		errReused := d.Decode(data, &reused)
		if (err == nil) != (errReused == nil) || (err != nil && !sameReject(err, errReused)) {
			t.Fatalf("fresh and reused records disagree: %v vs %v", err, errReused)
		}
		if err == nil && qlikSummary(&rec) != qlikSummary(&reused) {
			t.Fatalf("reused record differs from a fresh one:\nfresh  %s\nreused %s", qlikSummary(&rec), qlikSummary(&reused))
		}

		if err != nil {
			checkReject(t, err, qlikReasons)
			return
		}

		checkBody(t, &rec)
		switch rec.Class {
		case cdc.ClassDML:
			checkDML(t, &rec, cdc.OpInsert, cdc.OpUpdate, cdc.OpDelete, cdc.OpRefresh)
			if (rec.RowImage() == &rec.Before) != (rec.Op == cdc.OpDelete && rec.Before.Present) {
				t.Fatalf("%v uses the wrong row image", rec.Op)
			}
			if rec.Op != cdc.OpRefresh && !rec.HasOpTS {
				t.Fatalf("%v without a timestamp", rec.Op)
			}
			if rec.HasOpTS && rec.OpTS.Location() != time.UTC {
				t.Fatalf("OpTS %v not in UTC", rec.OpTS)
			}
			if !rec.HasOpTS && !rec.OpTS.IsZero() {
				t.Fatalf("OpTS %v set without HasOpTS", rec.OpTS)
			}
			for _, m := range []string{rec.Qlik.ChangeMask, rec.Qlik.ColumnMask} {
				mask, err := cdc.ParseMask(m)
				if err != nil {
					t.Fatalf("accepted mask %q does not parse: %v", m, err)
				}
				back, err := cdc.ParseMask(mask.String())
				if err != nil || fmt.Sprint(back.Ordinals()) != fmt.Sprint(mask.Ordinals()) {
					t.Fatalf("mask %q does not round-trip via %q", m, mask.String())
				}
			}
			if rec.Metadata.Columns != nil || rec.Qlik.HasTableVersion {
				t.Fatalf("data message carries metadata")
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
			if rec.Metadata.Format != cdc.FormatQlik {
				t.Fatalf("metadata format %v", rec.Metadata.Format)
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
			if rec.Op != 0 || rec.Before.Present || rec.After.Present {
				t.Fatalf("metadata record carries DML state")
			}
		default:
			t.Fatalf("decoded a record of class %v", rec.Class)
		}

		// A message the Qlik decoder accepts has a Qlik top-level key
		// (magic, headers, lineage or tableStructure), so Auto hands it to
		// the Qlik decoder and gets the same record.
		if err := auto.Decode(data, &autoRec); err != nil || autoRec.Format != cdc.FormatQlik {
			t.Fatalf("Auto: %v (format %v) for a message the Qlik decoder accepts", err, autoRec.Format)
		}
		if qlikSummary(&autoRec) != qlikSummary(&rec) {
			t.Fatalf("Auto differs from Qlik:\nauto %s\nqlik %s", qlikSummary(&autoRec), qlikSummary(&rec))
		}
	})
}

// sameReject: two decodes of one input reject it for the same reason. The
// detail must match too, except for metadata, where it may name whichever
// bad column the map iteration met first.
func sameReject(a, b error) bool {
	ra, oka := cdc.AsReject(a)
	rb, okb := cdc.AsReject(b)
	if !oka || !okb || ra.Reason != rb.Reason {
		return false
	}
	return ra.Reason == cdc.ReasonBadMetadata || ra.Detail == rb.Detail
}

func qlikSummary(r *cdc.Record) string {
	return summary(r) + fmt.Sprintf("|%v|%+v", r.Format, r.Qlik)
}
