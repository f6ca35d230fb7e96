package pipeline_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/syncbuf"
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
// bytes are dead-lettered, at the last record's line (they are none of
// their own). Repaired as the dead letter says (cut at their start) and
// appended to, the file's new records are read.
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
	if len(dl) != 1 || dl[0].Record == nil || *dl[0].Record != garbage || dl[0].Offset != 3 || !strings.HasSuffix(dl[0].Source, filepath.Base(p)+":3") {
		t.Errorf("dead letters %+v: want the trailing bytes, at line 3", dl)
	}
	// The reason names where the garbage starts, so that it can be cut off.
	if len(dl) == 1 && (dl[0].Reason != "malformed_json" || !strings.Contains(dl[0].Error, "truncate -s "+strconv.Itoa(gz.Len()))) {
		t.Errorf("dead letter reason %s: %q; want malformed_json naming truncate -s %d", dl[0].Reason, dl[0].Error, gz.Len())
	}
	var more bytes.Buffer
	w = gzip.NewWriter(&more)
	w.Write([]byte(dml("3", "") + "\n"))
	w.Close()
	if err := os.WriteFile(p, append(gz.Bytes(), more.Bytes()...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := export(t, dir, nil, p); err != nil {
		t.Fatal(err)
	}
	rows = query(t, openDuck(t), `SELECT count(*) FROM `+lakeGlob(dir, "S.T"))
	if got := rowStrings(rows)[0]; got != "3" {
		t.Errorf("rows after the repair and a new member: %s, want 3", got)
	}
	if n := len(readDLQ(t, dir)); n != 1 {
		t.Errorf("%d dead letters after the rerun, want the one", n)
	}
}

// TestDDLWithoutMetadataIsWarnedOnce: a DDL record for a table that never
// gets OBJECT_METADATA opens no version; the run says so once, naming the
// table, instead of passing over it in silence.
func TestDDLWithoutMetadataIsWarnedOnce(t *testing.T) {
	ddl := func(pos string) string {
		return `{"op_type":"DDL","op_ts":"2026-07-13T05:00:00Z","pos":"` + pos + `","ddl":{"object":{"catalog":"","schema":"S","object":"GHOST"},"statement":"ALTER TABLE S.GHOST ADD (C NUMBER(10))"}}`
	}
	p := writeFile(t, t.TempDir(), "in.jsonl", ordersMeta+"\n"+dml("1", "")+"\n"+ddl("d1")+"\n"+ddl("d2")+"\n")
	var logs syncbuf.Buffer
	if _, err := export(t, t.TempDir(), func(c *pipeline.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	}, p); err != nil {
		t.Fatal(err)
	}
	var warned int
	for _, l := range strings.Split(logs.String(), "\n") {
		var e struct {
			Msg    string   `json:"msg"`
			Tables []string `json:"tables"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && strings.Contains(e.Msg, "never got OBJECT_METADATA") {
			warned++
			if len(e.Tables) != 1 || e.Tables[0] != "S.GHOST" {
				t.Errorf("warning names tables %q, want [S.GHOST]", e.Tables)
			}
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings about DDL without metadata, want 1; logs:\n%s", warned, logs.String())
	}
}
