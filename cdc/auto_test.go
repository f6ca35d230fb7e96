package cdc_test

import (
	"errors"
	"testing"

	"github.com/buger/jsonparser"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// sniffQlik is how Auto chose a message's decoder before it shared the
// decoders' scan: a Qlik-only key among the top-level keys, as
// jsonparser.ObjectEach reports them (unescaped).
func sniffQlik(data []byte) bool {
	qlik := false
	stop := errors.New("found")
	_ = jsonparser.ObjectEach(data, func(key, _ []byte, _ jsonparser.ValueType, _ int) error {
		switch string(key) {
		case "magic", "headers", "lineage", "tableStructure":
			qlik = true
			return stop
		}
		return nil
	})
	return qlik
}

// FuzzAutoDecodesAsItsFormat: Auto, reused from message to message, must
// decode each message exactly as a fresh decoder of the format its top-level
// keys name does; malformed input is rejected as malformed either way.
func FuzzAutoDecodesAsItsFormat(f *testing.F) {
	for _, s := range []string{
		refSchema, refStreamMetadata, refObjectMetadata, refInsert, refUpdate, refDelete, refUpsert, refDDL, refCloudEvent,
		`{"he\u0061ders":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00.000"},"table":"T","data":{"A":"1"}}`,
		`{"magic":"atMSG","type":"DT","message":{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00.000"},"table":"T","data":{"A":"1"}}}`,
		`{"qual_table":"S.T","op_type":"I","op_ts":"2026-07-13 04:00:00.000000","after":{"A":1},"lineage":{}}`,
		`{"tableStructure":{"tableColumns":{"A":{"ordinal":1,"type":"STRING"}}},"lineage":{"schema":"S","table":"T"}}`,
		`{"qual_table":"S.T","op_type":"I","op_ts":"2026-07-13 04:00:00.000000","after":{"A":1}`,
		`[1,2]`, `"x"`, ``, `{}`,
	} {
		f.Add([]byte(s))
	}
	for _, l := range readQlikSample(f) {
		f.Add([]byte(l))
	}
	auto := &cdc.Auto{GoldenGate: newDecoder(f, cdc.GoldenGateNames{}), Qlik: cdc.NewQlik(cdc.QlikOptions{})}
	var got cdc.Record
	f.Fuzz(func(t *testing.T, data []byte) {
		var want cdc.Record
		var wantErr error
		if sniffQlik(data) {
			wantErr = cdc.NewQlik(cdc.QlikOptions{}).Decode(data, &want)
		} else {
			wantErr = newDecoder(t, cdc.GoldenGateNames{}).Decode(data, &want)
		}
		err := auto.Decode(data, &got)
		if wantErr != nil || err != nil {
			if wantErr == nil || err == nil {
				t.Fatalf("Auto: %v, the message's own decoder: %v", err, wantErr)
			}
			if re, ok := cdc.AsReject(wantErr); ok && re.Reason == cdc.ReasonMalformedJSON {
				// Malformed input may now reach the other decoder; either
				// calls it malformed.
				if ge, ok := cdc.AsReject(err); !ok || ge.Reason != cdc.ReasonMalformedJSON {
					t.Fatalf("Auto: %v, want a malformed-JSON reject like %v", err, wantErr)
				}
				return
			}
			if !sameReject(err, wantErr) {
				t.Fatalf("Auto: %v, the message's own decoder: %v", err, wantErr)
			}
			return
		}
		if qlikSummary(&got) != qlikSummary(&want) {
			t.Fatalf("Auto differs from the message's own decoder:\nauto %s\nown  %s", qlikSummary(&got), qlikSummary(&want))
		}
	})
}
