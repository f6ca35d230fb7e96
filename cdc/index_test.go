package cdc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/buger/jsonparser"
)

// objectEach lists an object's members as jsonparser reports them, keys
// unescaped.
func objectEach(data []byte) ([]string, error) {
	var out []string
	err := jsonparser.ObjectEach(data, func(key, value []byte, vt jsonparser.ValueType, _ int) error {
		out = append(out, fmt.Sprintf("%q=%q(%v)", key, value, vt))
		return nil
	})
	return out, err
}

func indexed(t *testing.T, ms []jsonMember) []string {
	var out []string
	for _, m := range ms {
		key := m.key
		if m.keyEscaped {
			key, _ = jsonparser.Unescape(m.key, nil)
		}
		out = append(out, fmt.Sprintf("%q=%q(%v)", key, m.value, m.vt))
		// plain lets the writer skip unescaping and UTF-8 validation.
		plain := m.vt == jsonparser.String && bytes.IndexByte(m.value, '\\') < 0 && isASCII(m.value)
		if m.plain != plain {
			t.Errorf("member %q value %q: plain %v, want %v", key, m.value, m.plain, plain)
		}
	}
	return out
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// checkIndex: the index agrees with encoding/json on validity and with
// jsonparser.ObjectEach on the members of the record and of its object
// members.
func checkIndex(t *testing.T, data []byte) {
	t.Helper()
	var ix jsonIndex
	ok := scanJSON(data, &ix)
	if want := json.Valid(data); ok != want {
		t.Fatalf("scanJSON(%q) = %v, encoding/json says %v", data, ok, want)
	}
	if !ok || !ix.isObj {
		return
	}
	want, err := objectEach(data)
	if err != nil {
		t.Fatalf("jsonparser cannot read valid %q: %v", data, err)
	}
	if got := indexed(t, ix.top); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%q: top members\n%v\nwant\n%v", data, got, want)
	}
	for _, m := range ix.top {
		if m.vt != jsonparser.Object {
			if m.first != -1 || m.count != 0 {
				t.Fatalf("%q: member %q is a %v but has nested members", data, m.key, m.vt)
			}
			continue
		}
		want, err := objectEach(m.value)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if m.count > 0 {
			got = indexed(t, ix.nested[m.first:m.first+m.count])
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%q: members of %q\n%v\nwant\n%v", data, m.key, got, want)
		}
	}
}

func TestJSONIndex(t *testing.T) {
	for _, c := range []string{
		`{}`, `{"a":1}`, ` { "a" : "x\"y" , "b" : { "c" : [1,{"d":2}], "e":{} , "f":{"g":null}} , "h":[{"i":1}], "j":{}} `,
		`{"a":{"b":1},"a":{"c":2}}`, `{"k\u0041y":{"n\u0042":"\u00e9"}}`, `{"a":[],"b":{"x":[[]],"y":true,"z":false}}`,
		`[{"a":1}]`, `"x"`, `{"a":1`, `{"a":{"b":}}`, `{"before":null,"after":{"ID":1,"N":-1.5e3,"S":"","T":"2026"}}`,
		`{"a":"é","b":{"c":"x\\u00e9","d":"plain","e":"caf\u00e9","f":"\u007f","g":["x"]}}`,
	} {
		checkIndex(t, []byte(c))
	}
	data, _ := os.ReadFile("../testdata/goldengate/sample.jsonl")
	for _, line := range bytes.Split(data, []byte("\n")) {
		checkIndex(t, line)
	}
}

func FuzzJSONIndex(f *testing.F) {
	for _, path := range []string{"../testdata/goldengate/sample.jsonl", "../testdata/qlik/sample.jsonl"} {
		data, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(data), "\n") {
			f.Add([]byte(line))
		}
	}
	f.Add([]byte(`{"a":{"b":[1,{"c":2}],"d":{}},"e":[{"f":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) { checkIndex(t, data) })
}
