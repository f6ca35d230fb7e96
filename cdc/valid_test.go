package cdc

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `true`, `null`, ` {"a" : [1, 2, {"b": null}] } `,
		`{"a":"\u00e9\n\"x\""}`, `[[[[]]]]`, `{"a":{"b":{"c":[1,{"d":"e"}]}}}`,
		``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
		`tru`, `nul`, `"abc`, "\"a\x01b\"", `"\x"`, `"\u12g4"`, `{"a":1}{"b":2}`, `{"a":1} x`, `[1 2]`, `{"a" 1}`,
		`{1:2}`, `[}`, `{]`, `NaN`, `"\ud800"`,
	}
	for _, c := range cases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

// FuzzValidJSON: validJSON never panics and agrees with encoding/json on
// every input.
func FuzzValidJSON(f *testing.F) {
	for _, path := range []string{"../testdata/goldengate/sample.jsonl", "../testdata/qlik/sample.jsonl"} {
		data, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(data), "\n") {
			f.Add([]byte(line))
		}
	}
	f.Add([]byte(`{"a":[1,2,{"b":"\u00e9"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", data, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	data, _ := os.ReadFile("../testdata/goldengate/sample.jsonl")
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	b.Run("validJSON", func(b *testing.B) {
		for b.Loop() {
			for _, l := range lines {
				validJSON([]byte(l))
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			for _, l := range lines {
				json.Valid([]byte(l))
			}
		}
	})
}
