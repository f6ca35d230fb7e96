// Package parsebench measures the JSON parsers the performance issue
// named against the exporter's own GoldenGate decoder, on the records the
// benchmark stream is made of. It is a module of its own, so that the
// parsers it compares with are not dependencies of the exporter:
//
//	cd tools/parsebench && go test -bench . -benchtime 2s
//
// Each benchmark reads the same DML records; every one must take all of
// a record that the exporter needs (its table, op, op_ts, xid, pos, and
// each image's field names and values), and the test below holds each to
// the exporter's decoder on every record, so that none is measured doing
// less than the others.
package parsebench

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/buger/jsonparser"
	"github.com/bytedance/sonic"
	gojson "github.com/goccy/go-json"
	"github.com/minio/simdjson-go"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

// ggRecord is a DML record as the straightforward version read it: a
// struct for the envelope, maps for the row images.
type ggRecord struct {
	Table  string         `json:"qual_table"`
	Op     string         `json:"op_type"`
	OpTS   string         `json:"op_ts"`
	XID    string         `json:"xid"`
	Pos    string         `json:"pos"`
	Before map[string]any `json:"before"`
	After  map[string]any `json:"after"`
}

// summary is what every parser must find in a record: enough to tell that
// it read all of it. Values are compared as the record's text of them.
type summary struct {
	table, op, opTS, xid, pos string
	fields                    int    // fields of both images
	valueBytes                int    // bytes of their values' text, strings unquoted
	names                     string // the images' field names, in the record's order (before, after)
}

// setEnvelope keeps the value of the record's member name, if the
// summary has it.
func (s *summary) setEnvelope(name, v string) {
	switch name {
	case "qual_table":
		s.table = v
	case "op_type":
		s.op = v
	case "op_ts":
		s.opTS = v
	case "xid":
		s.xid = v
	case "pos":
		s.pos = v
	}
}

func records(tb testing.TB, tables int) [][]byte {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Records: 20000, Tables: tables, Columns: 12, MaxColumns: 20, Seed: 1, UpdateRatio: 0.3, DeleteRatio: 0.1, NullRatio: 0.1}); err != nil {
		tb.Fatal(err)
	}
	d, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		tb.Fatal(err)
	}
	var rec cdc.Record
	var dml [][]byte
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if d.Decode(l, &rec) == nil && rec.Class == cdc.ClassDML {
			dml = append(dml, l)
		}
	}
	if len(dml) == 0 {
		tb.Fatal("no DML records generated")
	}
	return dml
}

// parser decodes one record; sum, when not nil, receives what it found.
type parser struct {
	name string
	ok   func() bool // whether this machine can run it
	new  func() func(line []byte, sum *summary) error
}

var parsers = []parser{
	{name: "exporter", new: func() func([]byte, *summary) error {
		d, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
		var rec cdc.Record
		return func(l []byte, s *summary) error {
			if err := d.Decode(l, &rec); err != nil {
				return err
			}
			if s != nil {
				*s = summary{table: rec.Table, op: rec.Op.String(), opTS: rec.OpTS.UTC().Format("2006-01-02T15:04:05.000000Z"), xid: rec.XID, pos: rec.Pos}
				for _, im := range []*cdc.Image{&rec.Before, &rec.After} {
					for _, f := range im.Fields {
						s.fields++
						s.valueBytes += valueLen(f.Value)
						s.names += f.Name + ","
					}
				}
			}
			return nil
		}
	}},
	{name: "encoding-json", new: func() func([]byte, *summary) error {
		return mapParser(stdjson.Unmarshal)
	}},
	{name: "goccy-go-json", new: func() func([]byte, *summary) error {
		return mapParser(gojson.Unmarshal)
	}},
	{name: "sonic", ok: sonicOK, new: func() func([]byte, *summary) error {
		return mapParser(sonic.Unmarshal)
	}},
	{name: "jsonparser", new: func() func([]byte, *summary) error {
		return jsonparserWalk
	}},
	{name: "simdjson-go", ok: simdjson.SupportedCPU, new: func() func([]byte, *summary) error {
		var pj *simdjson.ParsedJson
		var it, root, img simdjson.Iter
		var obj, imObj simdjson.Object
		var el simdjson.Element
		return func(l []byte, s *summary) error {
			var err error
			if pj, err = simdjson.Parse(l, pj, simdjson.WithCopyStrings(false)); err != nil {
				return err
			}
			it = pj.Iter()
			it.Advance()
			if _, _, err := it.Root(&root); err != nil {
				return err
			}
			if _, err := root.Object(&obj); err != nil {
				return err
			}
			var sum summary
			for {
				name, t, err := obj.NextElementBytes(&img)
				if err != nil {
					return err
				}
				if t == simdjson.TypeNone {
					break
				}
				switch string(name) {
				case "before", "after":
					if t == simdjson.TypeNull {
						continue
					}
					if _, err := img.Object(&imObj); err != nil {
						return err
					}
					for {
						fname, ft, err := imObj.NextElementBytes(&el.Iter)
						if err != nil {
							return err
						}
						if ft == simdjson.TypeNone {
							break
						}
						sum.fields++
						if s == nil {
							continue // found; what it holds is the summary's
						}
						switch ft {
						case simdjson.TypeString:
							v, _ := el.Iter.StringBytes()
							sum.valueBytes += len(v)
						case simdjson.TypeNull:
							sum.valueBytes += len("null")
						case simdjson.TypeBool:
							v, _ := el.Iter.Bool()
							sum.valueBytes += len(strconv.FormatBool(v))
						default:
							f, _ := el.Iter.Float()
							sum.valueBytes += floatLen(f)
						}
						sum.names += string(fname) + ","
					}
				default:
					v, err := img.StringBytes()
					if err != nil {
						continue
					}
					if s != nil {
						sum.setEnvelope(string(name), string(v))
					}
				}
			}
			if s != nil {
				*s = sum
			}
			return nil
		}
	}},
}

func sonicOK() bool { return runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" }

// mapParser is the straightforward decoding: the record into a struct,
// its images into maps.
func mapParser(unmarshal func([]byte, any) error) func([]byte, *summary) error {
	return func(l []byte, s *summary) error {
		var r ggRecord
		if err := unmarshal(l, &r); err != nil {
			return err
		}
		if s == nil {
			return nil
		}
		*s = summary{table: r.Table, op: r.Op, opTS: r.OpTS, xid: r.XID, pos: r.Pos}
		for _, im := range []map[string]any{r.Before, r.After} {
			for _, v := range im {
				s.fields++
				s.valueBytes += anyLen(v)
			}
		}
		// A map has no order: the names are taken in the record's order
		// from the text, as the others find them.
		for _, im := range []string{"before", "after"} {
			_ = jsonparser.ObjectEach(member(l, im), func(k, _ []byte, _ jsonparser.ValueType, _ int) error {
				s.names += string(k) + ","
				return nil
			})
		}
		return nil
	}
}

// member is the record's member key, or nil when it has none (an image a
// record leaves out).
func member(l []byte, key string) []byte {
	v, _, _, _ := jsonparser.Get(l, key)
	return v
}

func anyLen(v any) int {
	switch v := v.(type) {
	case nil:
		return len("null")
	case string:
		return len(v)
	case bool:
		return len(strconv.FormatBool(v))
	case float64:
		return floatLen(v)
	}
	panic(fmt.Sprintf("unexpected %T", v))
}

// valueLen is the length of a value's text as anyLen counts it: a
// string's unquoted bytes, a number as the float64 it reads as.
func valueLen(raw []byte) int {
	if len(raw) > 0 && raw[0] == '"' {
		s, err := strconv.Unquote(string(raw))
		if err != nil {
			return -1
		}
		return len(s)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return floatLen(f)
	}
	return len(raw)
}

// floatLen is how a number's text is counted: as the float64 it reads as,
// since the parsers that build values (and simdjson-go's tape) keep that
// and not the text.
func floatLen(f float64) int { return len(strconv.FormatFloat(f, 'f', -1, 64)) }

// jsonparserWalk reads every member of the record and of its images with
// buger/jsonparser, without building anything.
func jsonparserWalk(l []byte, s *summary) error {
	var sum summary
	err := jsonparser.ObjectEach(l, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		switch string(k) {
		case "before", "after":
			if t != jsonparser.Object {
				return nil
			}
			return jsonparser.ObjectEach(v, func(fk, fv []byte, ft jsonparser.ValueType, _ int) error {
				sum.fields++
				if s == nil {
					return nil // found; what it holds is the summary's
				}
				switch ft {
				case jsonparser.String:
					u, err := jsonparser.ParseString(fv)
					if err != nil {
						return err
					}
					sum.valueBytes += len(u)
				case jsonparser.Number:
					f, err := jsonparser.ParseFloat(fv)
					if err != nil {
						return err
					}
					sum.valueBytes += floatLen(f)
				default:
					sum.valueBytes += len(fv)
				}
				sum.names += string(fk) + ","
				return nil
			})
		case "qual_table", "op_type", "op_ts", "xid", "pos":
			if s == nil {
				return nil
			}
			u, err := jsonparser.ParseString(v)
			if err != nil {
				return err
			}
			sum.setEnvelope(string(k), u)
		}
		return nil
	})
	if s != nil {
		*s = sum
	}
	return err
}

// TestParsersReadTheSame holds every parser to the exporter's decoder on
// every record: the same table, op, position and transaction, op_ts, the
// same number of fields and bytes of values, the same field names.
func TestParsersReadTheSame(t *testing.T) {
	lines := records(t, 4)[:2000]
	want := make([]summary, len(lines))
	ref := parsers[0].new()
	for i, l := range lines {
		if err := ref(l, &want[i]); err != nil {
			t.Fatal(err)
		}
		if want[i].fields == 0 || want[i].valueBytes <= 0 || want[i].table == "" || want[i].pos == "" {
			t.Fatalf("record %d: the exporter's decoder found %+v", i, want[i])
		}
	}
	for _, p := range parsers[1:] {
		if p.ok != nil && !p.ok() {
			t.Logf("%s: not supported on this machine", p.name)
			continue
		}
		dec := p.new()
		for i, l := range lines {
			var got summary
			if err := dec(l, &got); err != nil {
				t.Fatalf("%s, record %d: %v", p.name, i, err)
			}
			if got != want[i] {
				t.Fatalf("%s, record %d: found %+v, the exporter %+v", p.name, i, got, want[i])
			}
		}
	}
}

// BenchmarkParsers decodes the same DML records with each parser, over 4
// tables and over 500. Compare the ratios within one run: this machine's
// speed moves by ±20% from one run to the next.
//
// The measured work is each parser's least: the exporter's decoder
// validates the record and indexes its members (strings unescaped and
// numbers parsed later, by the column they go to); encoding/json, goccy
// and sonic build the struct and maps the straightforward version used;
// jsonparser and simdjson-go only reach every member of the record and of
// its images (simdjson-go parses the numbers as it builds its tape). The
// summaries the test compares are taken only there.
func BenchmarkParsers(b *testing.B) {
	for _, tables := range []int{4, 500} {
		lines := records(b, tables)
		var size int64
		for _, l := range lines {
			size += int64(len(l))
		}
		for _, p := range parsers {
			b.Run(fmt.Sprintf("tables=%d/%s", tables, p.name), func(b *testing.B) {
				if p.ok != nil && !p.ok() {
					b.Skip("not supported on this machine")
				}
				dec := p.new()
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					for _, l := range lines {
						if err := dec(l, nil); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}
