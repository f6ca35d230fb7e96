package source

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// ownRecord is a record of the input that is valid on its own: where it
// starts and its text as the reader joins it.
type ownRecord struct {
	line int64
	text string
}

// recordsValidOnTheirOwn finds the records of input that are valid JSON
// objects on their own, whatever surrounds them: a line in column 0 that
// is one (JSON Lines), and an indented pretty-printed record (a line "{",
// lines that start with a space or a tab, a line "}") that is one.
func recordsValidOnTheirOwn(input []byte) []ownRecord {
	input = bytes.TrimPrefix(input, []byte(utf8BOM))
	lines := strings.Split(string(input), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], "\r\n")
	}
	var out []ownRecord
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "{") && strings.HasSuffix(strings.TrimRight(l, " \t\v\f"), "}") && json.Valid([]byte(l)) {
			out = append(out, ownRecord{int64(i + 1), l})
			continue
		}
		if strings.TrimRight(l, " \t\v\f") != "{" {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimRight(lines[j], " \t\v\f") == "}" {
				text := strings.Join(lines[i:j+1], "\n")
				if json.Valid([]byte(text)) {
					out = append(out, ownRecord{int64(i + 1), text})
				}
				break
			}
			if !strings.HasPrefix(lines[j], " ") && !strings.HasPrefix(lines[j], "\t") || strings.TrimSpace(lines[j]) == "" {
				break
			}
		}
	}
	return out
}

// FuzzFileFraming reads an input as a file and on stdin, plain and gzip.
// Invariants: the reader never fails on it; message offsets increase; and
// every record valid on its own (recordsValidOnTheirOwn) comes out as a
// message of its own, whole, at its line: it lands or, if the consumer
// rejects it, is dead-lettered, but no broken record before it swallows
// it. The seeds are records cut short at their start and in their middle,
// JSON Lines and pretty-printed; each is read every way, so compressed and
// not, from a file and from stdin.
func FuzzFileFraming(f *testing.F) {
	lines, pretty := jsonLines(4), prettyRecords(4)
	join := func(rs []string) []byte { return []byte(strings.Join(rs, "\n") + "\n") }
	cut := func(rs []string, i, n int) []string {
		out := append([]string(nil), rs...)
		out[i] = out[i][:min(n, len(out[i]))]
		return out
	}
	f.Add(join(append([]string{`{"op_type":"STREAM_METADATA","producer":`}, lines...)))
	for _, rs := range [][]string{lines, pretty} {
		f.Add(join(rs))
		for _, n := range []int{1, 9, 40, 80} {
			f.Add(join(cut(rs, 0, n)))
			f.Add(join(cut(rs, 2, n)))
		}
	}
	f.Add(join([]string{lines[0], pretty[1], lines[2][:30], pretty[3][:50], lines[3], pretty[0]}))
	f.Add([]byte("{\n\"a\": [\n{\n\"b\": 1\n},\n" + pretty[0] + "\n" + lines[1] + "\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		if len(input) > 1<<16 {
			return
		}
		want := recordsValidOnTheirOwn(input)
		for _, way := range inputWays {
			got, _ := frame(t, input, 0, way)
			byLine := map[int64]string{}
			for i, m := range got {
				if i > 0 && m.Offset <= got[i-1].Offset {
					t.Fatalf("%s: message %d at line %d after one at %d", way, i, m.Offset, got[i-1].Offset)
				}
				byLine[m.Offset] = string(m.Value)
			}
			for _, r := range want {
				if byLine[r.line] != r.text {
					t.Fatalf("%s: the record at line %d, valid on its own, is not a message of its own: %q, want %q", way, r.line, byLine[r.line], r.text)
				}
			}
		}
	})
}
