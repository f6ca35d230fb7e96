package main

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// The budget becomes the Go memory limit, so that garbage does not double
// the process; GOMEMLIMIT, when set, wins.
func TestBudgetSetsTheGoMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	args := func() []string {
		return []string{"run", "--source", "file:../../testdata/goldengate/sample.jsonl",
			"--sink", "file://" + filepath.Join(t.TempDir(), "lake"), "--max-buffer-bytes", "123456789"}
	}

	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(math.MaxInt64)
		if code, _, stderr := runExporter(t, nil, args()...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if got := debug.SetMemoryLimit(-1); got != 123456789 {
			t.Errorf("memory limit %d, want the budget 123456789", got)
		}
	}

	debug.SetMemoryLimit(math.MaxInt64)
	if code, _, stderr := runExporter(t, map[string]string{"GOMEMLIMIT": "1GiB"}, args()...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it left alone", got)
	}
}
