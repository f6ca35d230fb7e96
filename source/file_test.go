package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func readAll(t *testing.T, s Source) []Message {
	t.Helper()
	var out []Message
	for {
		m, err := s.Next(context.Background())
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		c := *m
		c.Value = append([]byte(nil), m.Value...)
		out = append(out, c)
	}
}

func TestJSONLinesWithBlankLinesAndCRLF(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(p, []byte("{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}"), 0o644)
	s, err := NewFiles([]string{p}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, s)
	want := []struct {
		v    string
		line int64
	}{{`{"a":1}`, 1}, {`{"b":2}`, 4}, {`{"c":3}`, 5}}
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i, w := range want {
		if string(got[i].Value) != w.v || got[i].Offset != w.line || got[i].Position() != p+":"+itoa(w.line) {
			t.Errorf("message %d: %q at %d (%s), want %q at line %d", i, got[i].Value, got[i].Offset, got[i].Position(), w.v, w.line)
		}
		if got[i].Partition != PartitionName(p) {
			t.Errorf("partition %q", got[i].Partition)
		}
	}
	done, total := s.Progress()
	if done != total || total == 0 {
		t.Errorf("progress %d/%d after reading everything", done, total)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestGzipIsReadTransparently(t *testing.T) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.Write([]byte("{\"a\":1}\n{\"b\":2}\n"))
	gz.Close()
	p := filepath.Join(t.TempDir(), "in.jsonl.gz")
	os.WriteFile(p, buf.Bytes(), 0o644)
	s, _ := NewFiles([]string{p}, 0, nil)
	got := readAll(t, s)
	if len(got) != 2 || string(got[1].Value) != `{"b":2}` || got[1].Offset != 2 {
		t.Fatalf("got %+v", got)
	}
}

func TestOversizedRecordIsFlaggedAndSkipped(t *testing.T) {
	long := `{"x":"` + strings.Repeat("y", 10000) + `"}`
	p := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(p, []byte("{\"a\":1}\n"+long+"\n{\"b\":2}\n"), 0o644)
	s, _ := NewFiles([]string{p}, 1000, nil)
	got := readAll(t, s)
	if len(got) != 3 {
		t.Fatalf("%d messages", len(got))
	}
	if !got[1].Oversized || got[1].Size != int64(len(long)) || len(got[1].Value) > oversizedPrefix || !bytes.HasPrefix([]byte(long), got[1].Value) {
		t.Errorf("oversized message: oversized=%v size=%d len=%d", got[1].Oversized, got[1].Size, len(got[1].Value))
	}
	if got[0].Oversized || got[2].Oversized || string(got[2].Value) != `{"b":2}` || got[2].Offset != 3 {
		t.Errorf("neighbours of the oversized record: %+v %+v", got[0], got[2])
	}
}

// A pretty-printed record past the limit is one oversized message, of
// its whole size, read to its end: its later lines, among them one longer
// than the limit that closes a bracket opened before, are not taken for
// records of their own.
func TestOversizedPrettyPrintedRecordIsOneMessage(t *testing.T) {
	long := "{\n  \"a\": 1,\n  \"v\": \"" + strings.Repeat("b", 3000) + "\",\n  \"w\": [\"" + strings.Repeat("[", 2000) + "\",\n" +
		strings.Repeat("c", 1500) + "],\n  \"n\": {\"k\": \"}\"}\n}"
	in := "{\n  \"first\": 1\n}\n" + long + "\n{\n  \"next\": 2\n}\n"
	p := filepath.Join(t.TempDir(), "in.json")
	os.WriteFile(p, []byte(in), 0o644)
	s, _ := NewFiles([]string{p}, 4000, nil)
	got := readAll(t, s)
	if len(got) != 3 {
		t.Fatalf("%d messages, want 3", len(got))
	}
	if !got[1].Oversized || got[1].Size != int64(len(long)) || !bytes.HasPrefix([]byte(long), got[1].Value) || got[1].Offset != 4 {
		t.Errorf("oversized message: oversized=%v size=%d (want %d) offset %d", got[1].Oversized, got[1].Size, len(long), got[1].Offset)
	}
	if got[2].Oversized || strings.Join(strings.Fields(string(got[2].Value)), "") != `{"next":2}` {
		t.Errorf("the record after it: %+v", got[2])
	}
}

// A record cut short (its writer died, then the file was appended to)
// leaves brackets open: it ends before the next record's first line, and
// every record after it is read.
func TestRecordCutShortDoesNotTakeTheRestOfTheFile(t *testing.T) {
	var in strings.Builder
	cut := "{\n  \"cut\": {\n    \"a\": [1,"
	in.WriteString(cut + "\n")
	for i := range 200 {
		fmt.Fprintf(&in, "{\n  \"n\": %d\n}\n", i)
	}
	p := filepath.Join(t.TempDir(), "in.json")
	os.WriteFile(p, []byte(in.String()), 0o644)
	s, _ := NewFiles([]string{p}, 500, nil)
	got := readAll(t, s)
	if len(got) != 201 || got[0].Oversized || string(got[0].Value) != cut || got[0].Size != int64(len(cut)) {
		t.Fatalf("%d messages, first %q: want the cut record alone, whole, then the 200 after it", len(got), got[0].Value)
	}
	for i, m := range got[1:] {
		if v := strings.Join(strings.Fields(string(m.Value)), ""); v != fmt.Sprintf(`{"n":%d}`, i) || m.Offset != int64(4+3*i) {
			t.Fatalf("message %d: %q at line %d", i+1, v, m.Offset)
		}
	}
}

// A JSON Lines file whose first line is longer than the read buffer and
// the limit: its framing is decided on the whole line, and the lines after
// it are records of their own.
func TestLongFirstLineKeepsJSONLinesFraming(t *testing.T) {
	long := `{"x":"` + strings.Repeat("y", 600_000) + `"}`
	p := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(p, []byte(long+"\n{\"a\":1}\n{\"b\":2}\n"), 0o644)
	s, _ := NewFiles([]string{p}, 1000, nil)
	got := readAll(t, s)
	if len(got) != 3 || !got[0].Oversized || got[0].Size != int64(len(long)) || string(got[1].Value) != `{"a":1}` || string(got[2].Value) != `{"b":2}` {
		t.Fatalf("%d messages: want the long line oversized (size %d), then {\"a\":1} and {\"b\":2}", len(got), len(long))
	}
}

func TestPrettyPrintedRecordsAreFramedByDepth(t *testing.T) {
	in := "{\n \"a\": \"}{\",\n \"b\": [1,\n2]\n}\n{\n\"c\": \"\\\"}\"\n}\n"
	p := filepath.Join(t.TempDir(), "in.json")
	os.WriteFile(p, []byte(in), 0o644)
	s, _ := NewFiles([]string{p}, 0, nil)
	got := readAll(t, s)
	if len(got) != 2 {
		t.Fatalf("%d messages: %+v", len(got), got)
	}
	if got[0].Offset != 1 || got[1].Offset != 6 || !strings.Contains(string(got[1].Value), `"c"`) {
		t.Errorf("records at lines %d and %d: %q", got[0].Offset, got[1].Offset, got[1].Value)
	}
}

func TestStdinAndSeveralFilesInOrder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.jsonl")
	os.WriteFile(p, []byte("{\"f\":1}\n"), 0o644)
	s, err := NewFiles([]string{p, "-"}, 0, strings.NewReader("{\"s\":1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, s)
	if len(got) != 2 || !strings.HasPrefix(got[1].Partition, "stdin-") || got[1].Position() != "stdin:1" || got[0].Partition == got[1].Partition {
		t.Fatalf("got %+v", got)
	}
	// stdin is a new stream at every reading: its partition is new too
	again, _ := NewFiles([]string{"-"}, 0, strings.NewReader("{\"s\":1}\n"))
	if m := readAll(t, again); len(m) != 1 || m[0].Partition == got[1].Partition {
		t.Fatalf("second reading of stdin: %+v (first: %s)", m, got[1].Partition)
	}
}

func TestPartitionNamesAreSafeAndDistinct(t *testing.T) {
	a, b := PartitionName("/x/orders.jsonl"), PartitionName("/y/orders.jsonl")
	if a == b {
		t.Error("same base name in two folders gives one partition")
	}
	for _, n := range []string{a, PartitionName("/tmp/we ird/../na%me=1.json.gz")} {
		for _, c := range n {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				t.Errorf("partition %q has %q", n, c)
			}
		}
	}
}

func TestMissingFileAndFolderAreRejectedUpFront(t *testing.T) {
	if _, err := NewFiles([]string{"/no/such/file.jsonl"}, 0, nil); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := NewFiles([]string{t.TempDir()}, 0, nil); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("folder: %v", err)
	}
}

// TestByteOrderMarkIsNotPartOfTheFirstRecord: a file that begins with a
// UTF-8 byte order mark, plain or gzipped, yields its first record
// without it; a mark further on is left alone (the decoder rejects it).
func TestByteOrderMarkIsNotPartOfTheFirstRecord(t *testing.T) {
	dir := t.TempDir()
	text := "\xef\xbb\xbf{\"a\":1}\n\xef\xbb\xbf{\"b\":2}\n"
	plain := filepath.Join(dir, "bom.jsonl")
	os.WriteFile(plain, []byte(text), 0o644)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(text))
	w.Close()
	zipped := filepath.Join(dir, "bom.jsonl.gz")
	os.WriteFile(zipped, gz.Bytes(), 0o644)
	for _, p := range []string{plain, zipped} {
		s, _ := NewFiles([]string{p}, 0, nil)
		got := readAll(t, s)
		var values []string
		for _, m := range got {
			values = append(values, string(m.Value))
		}
		if len(got) != 2 || values[0] != `{"a":1}` || values[1] != "\xef\xbb\xbf{\"b\":2}" {
			t.Fatalf("%s: %q", filepath.Base(p), values)
		}
		if got[0].Size != 7 || got[0].Offset != 1 {
			t.Errorf("%s: first record size %d at line %d, want 7 at line 1", filepath.Base(p), got[0].Size, got[0].Offset)
		}
	}
}

// TestRecordSizeLeavesOutTheLineEnding: a record's Size is its own bytes,
// whatever ends its line (LF, CRLF, nothing at the end of the file), and
// a pretty-printed record's is its length as joined.
func TestRecordSizeLeavesOutTheLineEnding(t *testing.T) {
	for name, text := range map[string]string{
		"lf":     "{\"a\":1}\n{\"bb\":2}\n",
		"crlf":   "{\"a\":1}\r\n{\"bb\":2}\r\n",
		"no end": "{\"a\":1}\n{\"bb\":2}",
		"pretty": "{\r\n\"a\":1}\r\n{\n\"bb\":2\n}",
		// the CR ends the first 256 KiB read, the LF begins the next
		"split crlf": `{"x":"` + strings.Repeat("y", 256<<10-1-len(`{"x":""}`)) + "\"}\r\n{\"a\":1}\r\n",
	} {
		p := filepath.Join(t.TempDir(), "in.jsonl")
		os.WriteFile(p, []byte(text), 0o644)
		s, _ := NewFiles([]string{p}, 0, nil)
		for _, m := range readAll(t, s) {
			if m.Size != int64(len(m.Value)) {
				t.Errorf("%s: record %q... has size %d, want %d", name, m.Value[:min(len(m.Value), 40)], m.Size, len(m.Value))
			}
		}
	}
}
