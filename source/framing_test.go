package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inputWays are the ways an input reaches the reader: a file or stdin,
// plain or gzip.
var inputWays = []string{"file", "file.gz", "stdin", "stdin.gz"}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// frame reads input, given the way way, with the record limit max: the
// messages, copied, and the records left incomplete.
func frame(t testing.TB, input []byte, max int, way string) ([]Message, []IncompleteRecord) {
	t.Helper()
	if strings.HasSuffix(way, ".gz") {
		input = gzipped(t, input)
	}
	var s *Files
	var err error
	if strings.HasPrefix(way, "stdin") {
		s, err = NewFiles([]string{"-"}, max, bytes.NewReader(input))
	} else {
		p := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(p, input, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err = NewFiles([]string{p}, max, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []Message
	for {
		m, err := s.Next(context.Background())
		if err == io.EOF {
			return out, s.IncompleteRecords()
		}
		if err != nil {
			t.Fatalf("%s: %v", way, err)
		}
		c := *m
		c.Value = append([]byte(nil), m.Value...)
		out = append(out, c)
	}
}

// jsonLines are valid GoldenGate records, one a line.
func jsonLines(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`{"table":"S.T","op_type":"I","op_ts":"2024-01-02 03:04:05.000000","pos":"%020d","after":{"ID":%d,"NAME":"n{%d["}}`, i, i, i))
	}
	return out
}

// prettyRecords are the same records, indented as jq prints them.
func prettyRecords(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("{\n  \"table\": \"S.T\",\n  \"op_type\": \"I\",\n  \"op_ts\": \"2024-01-02 03:04:05.000000\",\n  \"pos\": \"%020d\",\n  \"after\": {\n    \"ID\": %d,\n    \"NAME\": \"n{%d[\"\n  },\n  \"tags\": [\n    1,\n    2\n  ]\n}", i, i, i))
	}
	return out
}

// wantRecords checks that every record of records that is not the one at
// index cut is among the messages, exactly and at its line, and that
// nothing is left incomplete.
func wantRecords(t *testing.T, name string, got []Message, inc []IncompleteRecord, records []string, cut int) {
	t.Helper()
	if len(inc) != 0 {
		t.Errorf("%s: records left for the next run, as still being written: %+v", name, inc)
	}
	byLine := map[int64]string{}
	for _, m := range got {
		byLine[m.Offset] = string(m.Value)
	}
	line := int64(1)
	for i, r := range records {
		if i != cut {
			if byLine[line] != r {
				t.Errorf("%s: record %d (line %d) is %q, want %q", name, i, line, byLine[line], r)
			}
		}
		line += int64(strings.Count(r, "\n")) + 1
	}
}

// TestBrokenFirstLineKeepsJSONLines: a first line cut short (the example
// of the issue) is a record of its own; the JSON Lines after it are read,
// every one, plain or gzip, from a file or stdin, and nothing is taken for
// a record still being written.
func TestBrokenFirstLineKeepsJSONLines(t *testing.T) {
	broken := `{"op_type":"STREAM_METADATA","producer":`
	records := append([]string{broken}, jsonLines(50)...)
	input := strings.Join(records, "\n") + "\n"
	for _, way := range inputWays {
		got, inc := frame(t, []byte(input), 0, way)
		if len(got) != len(records) || string(got[0].Value) != broken || got[0].Offset != 1 || got[0].Oversized {
			t.Fatalf("%s: %d messages, first %q: want %d, the broken line alone first", way, len(got), got[0].Value, len(records))
		}
		wantRecords(t, way, got, inc, records, -1)
	}
}

// TestCutRecordAtEveryByte: a record cut at any byte, in the middle of
// JSON Lines or of pretty-printed records, takes its own bytes only:
// every other record is read whole, plain or gzip, from a file or stdin.
func TestCutRecordAtEveryByte(t *testing.T) {
	for style, records := range map[string][]string{"json lines": jsonLines(5), "pretty": prettyRecords(5)} {
		whole := records[2]
		for cut := 1; cut < len(whole); cut++ {
			rs := append([]string(nil), records...)
			rs[2] = strings.TrimRight(whole[:cut], "\n")
			if strings.TrimSpace(rs[2]) == "" {
				continue
			}
			input := []byte(strings.Join(rs, "\n") + "\n")
			for _, way := range inputWays {
				if cut%7 != 0 && way != "file" {
					continue // every byte plain, a sample the other ways
				}
				got, inc := frame(t, input, 0, way)
				wantRecords(t, fmt.Sprintf("%s cut at %d, %s", style, cut, way), got, inc, rs, 2)
				if len(got) != len(rs) {
					t.Fatalf("%s cut at %d, %s: %d messages, want %d: the cut record alone and the others", style, cut, way, len(got), len(rs))
				}
			}
		}
	}
}

// TestPrettyRecordMissingItsLastBrace: a pretty-printed record without
// its closing brace is dead-lettered as its own lines, not the rest of the
// file with them.
func TestPrettyRecordMissingItsLastBrace(t *testing.T) {
	rs := prettyRecords(4)
	rs[1] = strings.TrimSuffix(rs[1], "\n}")
	got, inc := frame(t, []byte(strings.Join(rs, "\n")+"\n"), 0, "file")
	if len(got) != 4 || string(got[1].Value) != rs[1] {
		t.Fatalf("%d messages, the broken one %q", len(got), got[min(1, len(got)-1)].Value)
	}
	wantRecords(t, "missing brace", got, inc, rs, -1)
}

// TestUnindentedPrettyRecordsWithArraysOfObjects: records printed without
// indentation (Python's indent=0) put nested objects of an array at the
// start of a line: they stay inside their record.
func TestUnindentedPrettyRecordsWithArraysOfObjects(t *testing.T) {
	rec := "{\n\"table\": \"S.T\",\n\"op_type\": \"METADATA\",\n\"columns\": [\n{\n\"name\": \"A\"\n},\n{\n\"name\": \"B\",\n\"x\": {\n\"y\": [\n{\n\"z\": 1\n}\n]\n}\n}\n]\n}"
	rs := []string{rec, rec, jsonLines(1)[0], rec}
	for _, way := range inputWays {
		got, inc := frame(t, []byte(strings.Join(rs, "\n")+"\n"), 0, way)
		if len(got) != len(rs) {
			t.Fatalf("%s: %d messages, want %d", way, len(got), len(rs))
		}
		wantRecords(t, way, got, inc, rs, -1)
	}
}

// TestEndOfInputInsideARecord: a file that ends inside a record is left
// for the next run when the record may still be being written (no line
// ending, or a pretty-printed record's lines), and read, broken, when it
// was written whole: a JSON Lines line with its line ending.
func TestEndOfInputInsideARecord(t *testing.T) {
	first := jsonLines(1)[0] + "\n"
	for _, c := range []struct {
		name, tail string
		left       bool
	}{
		{"json lines without line ending", `{"op_type":"I","after":{"A":1`, true},
		{"json lines with its line ending", `{"op_type":"STREAM_METADATA","producer":` + "\n", false},
		{"json lines in a string", `{"op_type":"I","after":{"A":"x` + "\n", false},
		{"pretty, its first line", "{\n", true},
		{"pretty, a few lines", "{\n  \"a\": {\n    \"b\": 1,\n", true},
	} {
		got, inc := frame(t, []byte(first+c.tail), 0, "file")
		if c.left {
			if len(got) != 1 || len(inc) != 1 || inc[0].Line != 2 {
				t.Errorf("%s: %d messages, %+v left: want the record left for the next run", c.name, len(got), inc)
			}
			continue
		}
		if len(got) != 2 || len(inc) != 0 || string(got[1].Value) != strings.TrimSuffix(c.tail, "\n") {
			t.Errorf("%s: %d messages, %+v left: want the broken record read", c.name, len(got), inc)
		}
	}
}

// TestGzipTrailingGarbage: bytes after the last gzip member that are not
// gzip data come, after every record, as one damaged record that names
// the file and the byte they start at; members one after another are all
// read.
func TestGzipTrailingGarbage(t *testing.T) {
	lines := jsonLines(3)
	a := gzipped(t, []byte(lines[0]+"\n"+lines[1]+"\n"))
	b := gzipped(t, []byte(lines[2]+"\n"))
	garbage := []byte("not gzip \x00\x01 at all")
	p := filepath.Join(t.TempDir(), "in.jsonl.gz")
	os.WriteFile(p, append(append(append([]byte(nil), a...), b...), garbage...), 0o644)
	s, _ := NewFiles([]string{p}, 0, nil)
	got := readAll(t, s)
	if len(got) != 4 {
		t.Fatalf("%d messages, want the 3 records and the trailing bytes", len(got))
	}
	for i, l := range lines {
		if string(got[i].Value) != l || got[i].Damaged != "" {
			t.Errorf("record %d: %q", i, got[i].Value)
		}
	}
	d := got[3]
	at := fmt.Sprintf("from byte %d", len(a)+len(b))
	if !bytes.Equal(d.Value, garbage) || d.Size != int64(len(garbage)) || d.Offset != 3 || !strings.Contains(d.Damaged, p) || !strings.Contains(d.Damaged, at) {
		t.Errorf("trailing bytes: %q size %d at %d, %q: want them whole, named by file and %q", d.Value, d.Size, d.Offset, d.Damaged, at)
	}
}

// TestGzipDamagedMember: a member whose data is damaged stops the reading
// with an error that names the file and where the member starts.
func TestGzipDamagedMember(t *testing.T) {
	a := gzipped(t, []byte(strings.Join(jsonLines(2), "\n")+"\n"))
	b := gzipped(t, []byte(strings.Repeat(jsonLines(1)[0]+"\n", 50)))
	b[len(b)-6] ^= 0xff // the CRC and size trailer
	p := filepath.Join(t.TempDir(), "in.jsonl.gz")
	os.WriteFile(p, append(append([]byte(nil), a...), b...), 0o644)
	s, _ := NewFiles([]string{p}, 0, nil)
	var err error
	for err == nil {
		_, err = s.Next(context.Background())
	}
	if want := fmt.Sprintf("starts at byte %d", len(a)); err == io.EOF || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v: want one naming %s and %q", err, p, want)
	}
}

// TestNamedStdinLeavesAnIncompleteRecord: a named stdin stream is fed
// again after a crash, so a record cut off at its end is left for that
// run, as a file's is; an unnamed one is read once, and its cut-off
// record is final (a broken record for the dead letters).
func TestNamedStdinLeavesAnIncompleteRecord(t *testing.T) {
	input := jsonLines(1)[0] + "\n" + `{"op_type":"I","after":{"A":1`
	for _, c := range []struct {
		name       string
		open       func() (*Files, error)
		messages   int
		incomplete int
	}{
		{"named", func() (*Files, error) { return NewNamedStdin("feed", 0, strings.NewReader(input)) }, 1, 1},
		{"unnamed", func() (*Files, error) { return NewFiles([]string{"-"}, 0, strings.NewReader(input)) }, 2, 0},
	} {
		s, err := c.open()
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, s)
		if inc := s.IncompleteRecords(); len(got) != c.messages || len(inc) != c.incomplete {
			t.Errorf("%s stdin: %d messages, %d left incomplete; want %d and %d", c.name, len(got), len(inc), c.messages, c.incomplete)
		}
		s.Close()
	}
}
