package cdc

import (
	"strings"
	"testing"
)

func TestRenamedFieldsCannotTakeReservedNames(t *testing.T) {
	for _, n := range []GoldenGateNames{{After: "data"}, {Before: "columns"}, {QualTable: "table"}, {OpType: "$schema"}} {
		if _, err := NewGoldenGate(n); err == nil || !strings.Contains(err.Error(), "record format itself uses") {
			t.Errorf("%+v: %v", n, err)
		}
	}
	if _, err := NewGoldenGate(GoldenGateNames{After: "new_image", Before: "old_image", QualTable: "tbl"}); err != nil {
		t.Errorf("ordinary renames refused: %v", err)
	}
}
