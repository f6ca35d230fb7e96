package cdc

// The Qlik data-message decoder as it was before it used the JSON index
// (one jsonparser lookup per member): FuzzQlikMatchesReference holds the
// indexed decoder to exactly its results. Metadata messages go to the
// real decoder, which reads them as it always did.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/buger/jsonparser"
)

type refQlik struct {
	opts   QlikOptions
	intern interner
	real   *Qlik
}

func newRefQlik(opts QlikOptions) *refQlik {
	return &refQlik{opts: opts, intern: newInterner(), real: NewQlik(opts)}
}

// Decode parses one message into rec, which is reset first; as the
// decoder does, it then refuses table names and metacolumn strings that
// are not UTF-8.
func (d *refQlik) Decode(data []byte, rec *Record) error {
	if err := d.decode(data, rec); err != nil {
		return err
	}
	return rec.checkText()
}

func (d *refQlik) decode(data []byte, rec *Record) error {
	rec.Reset()
	rec.Format = FormatQlik
	if !validJSON(data) {
		return Rejectf(ReasonMalformedJSON, "message is not valid JSON")
	}
	if _, vt, _, err := jsonparser.Get(data); err != nil || vt != jsonparser.Object {
		return Rejectf(ReasonMalformedJSON, "message is not a JSON object")
	}
	if magic, vt, _, err := jsonparser.Get(data, "magic"); err == nil {
		if vt != jsonparser.String || string(magic) != "atMSG" {
			return Rejectf(ReasonMalformedJSON, "envelope magic is %q, want \"atMSG\"", truncate(string(magic), 32))
		}
		typ, _ := jsonparser.GetString(data, "type")
		msg, vt, _, err := jsonparser.Get(data, "message")
		if err != nil || vt != jsonparser.Object {
			return Rejectf(ReasonMissingField, "envelope has no message object")
		}
		switch typ {
		case "DT":
			return d.dataMessage(msg, rec)
		case "MD":
			return d.real.Decode(data, rec)
		}
		return Rejectf(ReasonUnknownOp, "envelope type %q is neither DT (data) nor MD (metadata)", truncate(typ, 32))
	}
	if refHas(data, "lineage") || refHas(data, "tableStructure") {
		return d.real.Decode(data, rec)
	}
	if refHas(data, "headers") {
		return d.dataMessage(data, rec)
	}
	return Rejectf(ReasonMissingField, "message has neither headers (data message) nor lineage/tableStructure (metadata message)")
}

func refHas(data []byte, key string) bool {
	_, _, _, err := jsonparser.Get(data, key)
	return err == nil
}

func (d *refQlik) dataMessage(msg []byte, rec *Record) error {
	rec.Body = msg
	headers, vt, _, err := jsonparser.Get(msg, "headers")
	if err != nil || vt != jsonparser.Object {
		return Rejectf(ReasonMissingField, "data message has no headers object")
	}
	var opName, ts, streamPos, changeSeq, xid []byte
	var hasTS, hasXID, badTS bool
	var badMask, badMaskValue string
	var badCounter, badCounterValue string // a transaction header of the wrong type
	var badCounterString bool
	q := &rec.Qlik
	err = jsonparser.ObjectEach(headers, func(key, value []byte, vt jsonparser.ValueType, _ int) error {
		str := func() string { s, _ := jsonparser.ParseString(value); return s }
		if vt == jsonparser.String && len(value) == 0 {
			// Full-load messages carry empty strings for CDC-only headers.
			return nil
		}
		switch string(key) {
		case "operation":
			opName = value
		case "timestamp":
			ts, hasTS = value, vt == jsonparser.String
			badTS = vt != jsonparser.String && vt != jsonparser.Null
		case "streamPosition":
			if vt == jsonparser.String || vt == jsonparser.Number {
				streamPos = value // a number is kept as its text, as the decoder now does
			}
		case "changeSequence":
			if vt == jsonparser.String || vt == jsonparser.Number {
				changeSeq = value
			}
		case "transactionId":
			xid, hasXID = value, vt != jsonparser.Null
		case "changeMask":
			if vt == jsonparser.String {
				q.ChangeMask = str()
			} else if vt != jsonparser.Null {
				badMask, badMaskValue = "changeMask", string(value)
			}
		case "columnMask":
			if vt == jsonparser.String {
				q.ColumnMask = str()
			} else if vt != jsonparser.Null {
				badMask, badMaskValue = "columnMask", string(value)
			}
		case "transactionEventCounter":
			if vt == jsonparser.String {
				value = []byte(str())
			}
			n, err := strconv.ParseInt(string(value), 10, 64)
			switch {
			case vt == jsonparser.Null:
			case err == nil && (vt == jsonparser.Number || vt == jsonparser.String):
				q.EventCounter, q.HasEventCounter = n, true
			case badCounter == "":
				badCounter, badCounterValue, badCounterString = "transactionEventCounter", string(value), vt == jsonparser.String
			}
		case "transactionLastEvent":
			if vt == jsonparser.String {
				value = []byte(str())
			}
			text := strings.ToLower(string(value))
			switch {
			case vt == jsonparser.Null:
			case (vt == jsonparser.Boolean || vt == jsonparser.String) && (text == "true" || text == "false"):
				q.LastEvent, q.HasLastEvent = text == "true", true
			case badCounter == "":
				badCounter, badCounterValue, badCounterString = "transactionLastEvent", string(value), vt == jsonparser.String
			}
		}
		return nil
	})
	if err != nil {
		return Rejectf(ReasonMalformedJSON, "cannot read headers: %v", err)
	}
	if badTS {
		return Rejectf(ReasonBadOpTS, "headers.timestamp is %s, want an ISO 8601 string", truncate(string(ts), 64))
	}
	op, _ := jsonparser.ParseString(opName)
	rec.OpType = op
	switch op {
	case "INSERT":
		rec.Op = OpInsert
	case "UPDATE":
		rec.Op = OpUpdate
	case "DELETE":
		rec.Op = OpDelete
	case "REFRESH":
		rec.Op = OpRefresh
	default:
		return Rejectf(ReasonUnknownOp, "unknown operation %q (expected REFRESH, INSERT, UPDATE or DELETE)", truncate(op, 64))
	}
	rec.Class = ClassDML
	if err := d.table(msg, headers, rec); err != nil {
		return err
	}
	if hasTS {
		t, err := jsonparser.ParseString(ts)
		if err == nil {
			rec.OpTS, err = ParseOpTS([]byte(t))
		}
		if err != nil {
			return Rejectf(ReasonBadOpTS, "timestamp %q: %v", truncate(string(ts), 64), err)
		}
		rec.HasOpTS = true
	} else if rec.Op != OpRefresh {
		// Full-load rows carry no timestamp; the pipeline dates them.
		return Rejectf(ReasonBadOpTS, "%s message has no headers.timestamp", op)
	}
	if hasXID {
		rec.XID, rec.HasXID = scalarView(xid), true
	}
	switch {
	case streamPos != nil:
		rec.Pos, rec.HasPos = scalarView(streamPos), true
	case changeSeq != nil:
		rec.Pos, rec.HasPos = scalarView(changeSeq), true
	}
	if changeSeq != nil {
		q.ChangeSeq = scalarView(changeSeq)
	}
	if badMask != "" {
		return Rejectf(ReasonBadMask, "headers.%s is %s, want a string of hex digits", badMask, truncate(badMaskValue, 64))
	}
	for _, m := range []struct{ name, v string }{{"changeMask", q.ChangeMask}, {"columnMask", q.ColumnMask}} {
		if _, err := ParseMask(m.v); err != nil {
			return Rejectf(ReasonBadMask, "%s %q: %v", m.name, truncate(m.v, 64), err)
		}
	}
	if badCounter != "" {
		shown := truncate(badCounterValue, 64)
		if badCounterString {
			shown = strconv.Quote(shown)
		}
		want := map[string]string{"transactionEventCounter": "an integer", "transactionLastEvent": "true or false"}[badCounter]
		return Rejectf(ReasonValueMismatch, "headers.%s is %s, want %s", badCounter, shown, want)
	}
	if err := d.image(msg, "data", &rec.After); err != nil {
		return err
	}
	if err := d.image(msg, "beforeData", &rec.Before); err != nil {
		return err
	}
	if !rec.RowImage().Present {
		return Rejectf(ReasonMissingImage, "%s message for %s has no data", op, rec.Table)
	}
	return nil
}

// table names a data message's table: schema and table of the message (or
// of its headers), else the configured default.
func (d *refQlik) table(msg, headers []byte, rec *Record) error {
	for _, src := range [][]byte{msg, headers} {
		tab, err := jsonparser.GetString(src, "table")
		if err != nil || tab == "" {
			continue
		}
		sch, _ := jsonparser.GetString(src, "schema")
		rec.Table = d.intern.string(qlikQualified(sch, tab))
		return nil
	}
	if d.opts.DefaultTable != "" {
		rec.Table = d.opts.DefaultTable
		return nil
	}
	return Rejectf(ReasonBadTableName, "message names no schema/table and no default table is configured (--qlik-table)")
}

func (d *refQlik) image(msg []byte, key string, im *Image) error {
	v, vt, _, err := jsonparser.Get(msg, key)
	if err != nil || vt == jsonparser.Null {
		return nil
	}
	if vt != jsonparser.Object {
		return Rejectf(ReasonMalformedJSON, "%s is a %s, want an object", key, vt)
	}
	im.Present = true
	err = jsonparser.ObjectEach(v, func(k, value []byte, vt jsonparser.ValueType, _ int) error {
		im.Fields = append(im.Fields, Field{Name: d.intern.bytes(k), Value: value, Type: valueType(vt)})
		return nil
	})
	if err != nil {
		return Rejectf(ReasonMalformedJSON, "cannot read %s: %v", key, err)
	}
	return nil
}

// FuzzQlikMatchesReference: the indexed Qlik decoder accepts and rejects
// exactly what the jsonparser one did, for the same reasons, and fills the
// same record (Plain, which only the index knows, aside).
func FuzzQlikMatchesReference(f *testing.F) {
	data, err := os.ReadFile("../testdata/qlik/sample.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		f.Add([]byte(l))
		if len(l) > 10 {
			f.Add([]byte(l[:len(l)/2]))
			f.Add([]byte(strings.Replace(l, `"table"`, `"t\u0061ble"`, 1)))
			f.Add([]byte(strings.Replace(l, `"headers":{`, `"headers":{"operation":"DELETE",`, 1)))
		}
	}
	for _, s := range []string{
		`{"headers":{},"table":"T","data":{}}`, `{"headers":{"operation":"INSERT","timestamp":"2026-07-13T04:00:00"},"table":"T","table":"U","data":{"A":"1","A":"2"},"data":null}`,
		`{"magic":"atMSG","type":"DT","message":{"headers":{"operation":"REFRESH"},"schema":"S","table":"T","data":{"k\u0041":"\u00e9"}}}`,
		`{"magic":"atMSG","type":"XX","message":{}}`, `{"magic":"atMSG","type":"DT"}`, `{"magic":1}`,
		`{"headers":{"operation":"INSERT","timestamp":5},"table":"T","data":{}}`, `{"headers":{"operation":"UPDATE","changeMask":"zz"},"data":{}}`,
		`{"headers":{"operation":"DELETE","timestamp":"2026-07-13T04:00:00Z"},"headers":{"operation":"INSERT"},"table":"T","beforeData":{"A":null}}`,
	} {
		f.Add([]byte(s))
	}
	opts := QlikOptions{DefaultTable: "DEF.T"}
	got, want := NewQlik(opts), newRefQlik(opts)
	var g, w Record
	f.Fuzz(func(t *testing.T, data []byte) {
		gerr := got.Decode(data, &g)
		werr := want.Decode(data, &w)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: indexed decoder says %v, reference %v", data, gerr, werr)
		}
		if gerr != nil {
			gr, _ := AsReject(gerr)
			wr, _ := AsReject(werr)
			if gr == nil || wr == nil || gr.Reason != wr.Reason || gr.Error() != wr.Error() {
				t.Fatalf("%q: indexed decoder rejects with %v, reference with %v", data, gerr, werr)
			}
			return
		}
		if gs, ws := recordText(&g), recordText(&w); gs != ws {
			t.Fatalf("%q: records differ\nindexed   %s\nreference %s", data, gs, ws)
		}
	})
}

func recordText(r *Record) string {
	image := func(im *Image) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%v[", im.Present)
		for _, f := range im.Fields {
			fmt.Fprintf(&b, "%s=%q(%d) ", f.Name, f.Value, f.Type)
		}
		return b.String() + "]"
	}
	return fmt.Sprintf("%v|%s|%v|%q|%v %v|%q %v|%q %v|%s|%s|%+v|%q|%v|%+v",
		r.Class, r.Table, r.Op, r.OpType, r.OpTS, r.HasOpTS, r.XID, r.HasXID, r.Pos, r.HasPos,
		image(&r.Before), image(&r.After), r.Metadata, r.Body, r.Format, r.Qlik)
}
