package pipeline_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

// TestBrokenFirstRecordLosesNothing: a first line cut short followed by
// JSON Lines records (the example of issue 35), from a file or stdin,
// plain or gzip: every valid record is written, the broken line is
// dead-lettered whole, and the run succeeds.
func TestBrokenFirstRecordLosesNothing(t *testing.T) {
	broken := `{"op_type":"STREAM_METADATA","producer":`
	lines := []string{broken, ordersMeta}
	const n = 300
	for i := 1; i <= n; i++ {
		lines = append(lines, dml(itoa(int64(i)), ""))
	}
	text := []byte(strings.Join(lines, "\n") + "\n")
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(text)
	w.Close()
	for _, way := range []string{"file", "file.gz", "stdin", "stdin.gz"} {
		t.Run(way, func(t *testing.T) {
			input := text
			if strings.HasSuffix(way, ".gz") {
				input = gz.Bytes()
			}
			p := writeFile(t, t.TempDir(), "in.jsonl", string(input))
			dir := t.TempDir()
			sum, err := export(t, dir, func(c *pipeline.Config) {
				if strings.HasPrefix(way, "stdin") {
					src, err := source.NewFiles([]string{"-"}, 0, bytes.NewReader(input))
					if err != nil {
						t.Fatal(err)
					}
					c.Source = src
				}
			}, p)
			if err != nil {
				t.Fatal(err)
			}
			rows := query(t, openDuck(t), `SELECT count(*), count(DISTINCT ID) FROM `+lakeGlob(dir, "S.T"))
			if got := rowStrings(rows)[0]; got != fmt.Sprintf("%d|%d", n, n) {
				t.Errorf("rows written: %s, want %d", got, n)
			}
			dl := readDLQ(t, dir)
			if len(dl) != 1 || dl[0].Offset != 1 || dl[0].Record == nil || *dl[0].Record != broken || dl[0].Truncated {
				t.Errorf("dead letters %+v: want the broken line, whole", dl)
			}
			if sum.Rejected != 1 {
				t.Errorf("summary counts %d rejects, want 1", sum.Rejected)
			}
		})
	}
}

// TestGzipTrailingGarbageIsDeadLettered: a .gz file with bytes after its
// last member that are not gzip data: every record is written and the
// bytes are dead-lettered, every run the same.
func TestGzipTrailingGarbageIsDeadLettered(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(ordersMeta + "\n" + dml("1", "") + "\n" + dml("2", "") + "\n"))
	w.Close()
	garbage := "trailing garbage"
	p := writeFile(t, t.TempDir(), "in.jsonl.gz", gz.String()+garbage)
	dir := t.TempDir()
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	rows := query(t, openDuck(t), `SELECT count(*) FROM `+lakeGlob(dir, "S.T"))
	if got := rowStrings(rows)[0]; got != "2" {
		t.Errorf("rows written: %s, want 2", got)
	}
	dl := readDLQ(t, dir)
	if len(dl) != 1 || dl[0].Record == nil || *dl[0].Record != garbage || dl[0].Offset != 4 || !strings.HasSuffix(dl[0].Source, filepath.Base(p)+":4") {
		t.Errorf("dead letters %+v: want the trailing bytes, at line 4", dl)
	}
}
