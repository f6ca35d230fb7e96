package cdc_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// The invariants every decoder's fuzz target checks.

// checkReject: a failure is a bare *cdc.RejectError with one of the known
// reasons and a detail.
func checkReject(t *testing.T, err error, known map[cdc.Reason]bool) *cdc.RejectError {
	t.Helper()
	re, ok := err.(*cdc.RejectError)
	if !ok {
		t.Fatalf("error %v is a %T, not a *cdc.RejectError", err, err)
	}
	if re.Reason == "" || !known[re.Reason] {
		t.Fatalf("reject reason %q is not one of the fixed set", re.Reason)
	}
	if re.Detail == "" {
		t.Fatalf("reject %q has no detail", re.Reason)
	}
	return re
}

// checkBody: the record's Body is the JSON object it was decoded from.
func checkBody(t *testing.T, rec *cdc.Record) {
	t.Helper()
	if !json.Valid(rec.Body) || len(bytes.TrimSpace(rec.Body)) == 0 || bytes.TrimSpace(rec.Body)[0] != '{' {
		t.Fatalf("Body %q is not a JSON object", rec.Body)
	}
}

// checkDML: a row change names its table, has one of ops, keeps the op
// string it was decoded from and carries its row image.
func checkDML(t *testing.T, rec *cdc.Record, ops ...cdc.Op) {
	t.Helper()
	if rec.Table == "" {
		t.Fatalf("%v with an empty table", rec.Op)
	}
	known := false
	for _, op := range ops {
		known = known || rec.Op == op
	}
	if !known {
		t.Fatalf("row change with op %v, want one of %v", rec.Op, ops)
	}
	if rec.OpType != rec.Op.String() {
		t.Fatalf("op string %q decoded as %v", rec.OpType, rec.Op)
	}
	if !rec.RowImage().Present {
		t.Fatalf("%v without its row image", rec.Op)
	}
}
