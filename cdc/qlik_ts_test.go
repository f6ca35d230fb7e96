package cdc

import (
	"strings"
	"testing"
)

func TestQlikNonStringTimestampIsABadTimestamp(t *testing.T) {
	d := NewQlik(QlikOptions{DefaultTable: "S.T"})
	var rec Record
	for _, op := range []string{"INSERT", "REFRESH"} {
		err := d.Decode([]byte(`{"headers":{"operation":"`+op+`","timestamp":1720000000},"data":{"A":"1"}}`), &rec)
		re, ok := AsReject(err)
		if !ok || re.Reason != ReasonBadOpTS || !strings.Contains(re.Detail, "want an ISO 8601 string") {
			t.Errorf("%s with a numeric timestamp: %v", op, err)
		}
	}
}
