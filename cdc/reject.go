package cdc

import (
	"errors"
	"fmt"
)

// Reason classifies why a record was rejected. The set is small and fixed
// so that it can be a metric label.
type Reason string

const (
	ReasonMalformedJSON Reason = "malformed_json"
	ReasonUnknownOp     Reason = "unknown_op_type"
	ReasonMissingField  Reason = "missing_field"
	ReasonBadOpTS       Reason = "bad_op_ts"
	ReasonNoMetadata    Reason = "no_metadata"
	ReasonValueMismatch Reason = "value_mismatch"
	ReasonUnknownColumn Reason = "unknown_column"
	ReasonMissingImage  Reason = "missing_image"
	ReasonBadTableName  Reason = "bad_table_name"
	ReasonBadMetadata   Reason = "bad_metadata"
	ReasonOversized     Reason = "oversized"
	ReasonBadMask       Reason = "bad_mask"
)

// RejectError says why a record cannot be written. Everything that returns
// one leaves the rest of the stream unaffected: the caller sends the record
// to the dead-letter output and carries on.
type RejectError struct {
	Reason Reason
	Detail string
}

func (e *RejectError) Error() string { return string(e.Reason) + ": " + e.Detail }

// Rejectf builds a RejectError.
func Rejectf(reason Reason, format string, args ...any) *RejectError {
	return &RejectError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// AsReject returns the RejectError in err's chain, if any.
func AsReject(err error) (*RejectError, bool) {
	var re *RejectError
	ok := errors.As(err, &re)
	return re, ok
}
