package main

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// The budget becomes the Go memory limit, so that garbage does not double
// the process, plus what the tables of a catalog hold; GOMEMLIMIT, when
// set, wins.
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

	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		// With a catalog, the tables' states and the commits in flight
		// are allowed for beside the budget.
		debug.SetMemoryLimit(math.MaxInt64)
		if code, _, stderr := runExporter(t, nil, append(args(), "--catalog", "hadoop")...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		tablesPart := debug.SetMemoryLimit(-1) - 123456789 - catalogWorkBytes
		if tablesPart <= 0 || tablesPart%tableStateBytes != 0 {
			t.Errorf("memory limit with a catalog %d, want the budget 123456789, %d for the commits and %d for each table held",
				tablesPart+123456789+catalogWorkBytes, catalogWorkBytes, tableStateBytes)
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

// A maintenance pass collects garbage at a slower pace under a limit of
// what its bins may hold; GOGC or GOMEMLIMIT, when set, wins.
func TestMaintainPacesTheCollector(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		if _, set := os.LookupEnv(env); set {
			t.Skipf("%s is set in the test's environment", env)
		}
	}
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	paceCollector(4, 128<<20)
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("GC percent %d, want 400", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 4<<30 {
		t.Errorf("memory limit %d, want 4 GiB (4 tables at once, bins of 128 MiB)", got)
	}
	paceCollector(1, 1<<20)
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 1<<30 {
		t.Errorf("memory limit %d for small bins, want the 1 GiB floor", got)
	}
	debug.SetGCPercent(100)
	t.Setenv("GOGC", "100")
	paceCollector(4, 128<<20)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set, want it left alone", got)
	}
}
