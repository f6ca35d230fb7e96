package partition_test

import (
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
)

// hostileNames are table names that try to escape the table folder, hide,
// collide, or look like a Hive partition.
var hostileNames = []string{
	"SALES.ORDERS", "CDB1.SALES.ORDERS", "sales.orders", "ORDERS",
	"../../x", "..", ".", "...", "./x", "x/..", "x/.", ".hidden", "..hidden",
	"a/b", "/abs", "a\\b", "\\\\server\\share", "C:\\x", "C:",
	"a=b", "=", "dt=2026-07-13", "schema_version=1",
	"%", "%%", "%2F", "%2E", "%25", "a%2Fb", "100%",
	"a b", " ", "  lead", "trail ", "tab\there", "nl\nhere", "cr\r", "\x00", "nul\x00mid", "\x01\x1f", "\x7f",
	"é", "Ünïcødé.TÄBLE", "表", "😀", "\xff\xfe", "\xc3", // the last two are not valid UTF-8
	"$SYS#1_-.", "a.b.c.d", "a..b", "x.", "-", "_", "#", "$", "_AUDIT", "__x", "_.", "._",
	"?query", "a*b", "a:b", "a|b", "<x>", "\"q\"", "'q'", "a+b", "a,b", "a;b", "~user", "a&b", "@",
}

func checkSafe(t *testing.T, name, seg string) {
	t.Helper()
	if seg == "" {
		t.Errorf("TableSegment(%q) is empty", name)
	}
	if seg == "." || seg == ".." {
		t.Errorf("TableSegment(%q) = %q names a directory", name, seg)
	}
	if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
		t.Errorf("TableSegment(%q) = %q starts with a dot or '_': Spark and Hive skip it as hidden", name, seg)
	}
	if strings.ContainsAny(seg, "/\\=") {
		t.Errorf("TableSegment(%q) = %q contains a separator or '='", name, seg)
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c < 0x20 || c >= 0x7f {
			t.Errorf("TableSegment(%q) = %q contains byte %#x (control or non-ASCII)", name, seg, c)
		}
		if c == ' ' {
			t.Errorf("TableSegment(%q) = %q contains a space", name, seg)
		}
	}
}

func TestTableSegmentExamples(t *testing.T) {
	// Expected segments follow the documented rule: letters, digits and
	// _ - . $ # stay; every other byte is %XX in upper-case hex; a leading
	// '.' is %2E and a leading '_' is %5F.
	cases := map[string]string{
		"SALES.ORDERS":      "SALES.ORDERS",
		"CDB1.SALES.ORDERS": "CDB1.SALES.ORDERS",
		// the sink's own folders are not table folders
		"_schemas":     "%5Fschemas",
		"_checkpoints": "%5Fcheckpoints",
		"_dlq":         "%5Fdlq",
		// Spark and Hive skip folders starting with '_' or '.' as hidden
		"_dlq2":     "%5Fdlq2",
		"_AUDIT.T":  "%5FAUDIT.T",
		"__":        "%5F_",
		"S._AUDIT":  "S._AUDIT",
		".x_":       "%2Ex_",
		"S._dlq":    "S._dlq",
		"$SYS#1_-.": "$SYS#1_-.",
		"../../x":   "%2E.%2F..%2Fx",
		"..":        "%2E.",
		".":         "%2E",
		".hidden":   "%2Ehidden",
		"a/b":       "a%2Fb",
		"a\\b":      "a%5Cb",
		"a=b":       "a%3Db",
		"100%":      "100%25",
		"%2F":       "%252F",
		"a b":       "a%20b",
		"\x00":      "%00",
		"nl\nhere":  "nl%0Ahere",
		"\x7f":      "%7F",
		"é":         "%C3%A9",
		"😀":         "%F0%9F%98%80",
		"\xff":      "%FF",
		"a..b":      "a..b",
		"x.":        "x.",
	}
	for name, want := range cases {
		got, err := partition.TableSegment(name)
		if err != nil || got != want {
			t.Errorf("TableSegment(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestTableSegmentRoundTripAndSafety(t *testing.T) {
	names := append([]string(nil), hostileNames...)
	// every single byte, and every byte after a leading dot
	for c := 0; c < 256; c++ {
		names = append(names, string([]byte{byte(c)}), "."+string([]byte{byte(c)}), "A"+string([]byte{byte(c)})+"Z")
	}
	// random byte strings, deterministic
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := make([]byte, 1+rng.Intn(12))
		for j := range b {
			if rng.Intn(3) == 0 {
				b[j] = "./\\=%. "[rng.Intn(7)]
			} else {
				b[j] = byte(rng.Intn(256))
			}
		}
		names = append(names, string(b))
	}

	bySeg := map[string]string{}
	for _, name := range names {
		seg, err := partition.TableSegment(name)
		if err != nil {
			t.Errorf("TableSegment(%q): %v", name, err)
			continue
		}
		checkSafe(t, name, seg)
		back, err := partition.ParseTableSegment(seg)
		if err != nil || back != name {
			t.Errorf("ParseTableSegment(TableSegment(%q) = %q) = %q, %v", name, seg, back, err)
		}
		if prev, dup := bySeg[seg]; dup && prev != name {
			t.Errorf("names %q and %q share segment %q", prev, name, seg)
		}
		bySeg[seg] = name
		// deterministic
		if again, _ := partition.TableSegment(name); again != seg {
			t.Errorf("TableSegment(%q) gave %q then %q", name, seg, again)
		}
	}
}

// escapedLen is the length of name's segment: 3 bytes for each byte
// TableSegment escapes.
func escapedLen(name string) int {
	n := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case i == 0 && c == '.':
			n += 3
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("_-.$#", c) >= 0:
			n++
		default:
			n += 3
		}
	}
	return n
}

// A segment is one file or folder name, at most 255 bytes on the common
// file systems: a longer table name is refused, not written where no
// upload or recovery can follow it.
func TestTableSegmentLengthLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{strings.Repeat("A", 255), true},
		{strings.Repeat("A", 256), false},
		{strings.Repeat("S", 128) + "." + strings.Repeat("T", 126), true}, // 255
		{strings.Repeat("S", 128) + "." + strings.Repeat("T", 128), false},
		{"SALES." + strings.Repeat("表", 27), true},  // 6 + 27*9 = 249
		{"SALES." + strings.Repeat("表", 28), false}, // 258
		{" " + strings.Repeat("A", 252), true},      // 3 + 252
		{" " + strings.Repeat("A", 253), false},
	} {
		seg, err := partition.TableSegment(tc.name)
		if tc.ok != (err == nil) {
			t.Errorf("TableSegment of a %d-byte name (segment of %d): %v, want ok=%v", len(tc.name), escapedLen(tc.name), err, tc.ok)
			continue
		}
		if err == nil {
			if len(seg) != escapedLen(tc.name) {
				t.Errorf("segment of %d bytes, want %d", len(seg), escapedLen(tc.name))
			}
			if back, err := partition.ParseTableSegment(seg); err != nil || back != tc.name {
				t.Errorf("round trip: %q, %v", back, err)
			}
		} else if !strings.Contains(err.Error(), "255") {
			t.Errorf("error %q does not say the limit", err)
		}
	}
	if _, err := partition.ParseTableSegment(strings.Repeat("A", 256)); err == nil {
		t.Error("ParseTableSegment accepted a 256-byte segment")
	}
}

func TestTableSegmentEmpty(t *testing.T) {
	if seg, err := partition.TableSegment(""); err == nil {
		t.Errorf("TableSegment(\"\") = %q, want an error", seg)
	}
	if name, err := partition.ParseTableSegment(""); err == nil {
		t.Errorf("ParseTableSegment(\"\") = %q, want an error", name)
	}
}

func TestParseTableSegmentRejectsNonCanonical(t *testing.T) {
	bad := []string{
		"",
		// lower-case hex
		"a%2fb", "%2e", "%c3%A9", "%C3%a9", "%e9",
		// needless escapes of bytes that stand for themselves
		"%41", "a%41", "SALES%2EORDERS", "x%2E", "%2E%2E", "a%5F", "%24", "%23", "%2D", "%30",
		// truncated and broken escapes
		"%", "a%", "a%4", "%4", "%G1", "%1G", "%+1", "%-1", "%_1", "% 1", "%%41", "%0x",
		// bytes that must have been escaped
		"a/b", "a\\b", "a=b", "a b", "a%b", "\x00", "a\nb", "\x7f", "é", "\xff",
		// a leading _ left as it is: the sink's own folders, and hidden
		// ones (the spelling of lakes written before it was escaped)
		"_schemas", "_checkpoints", "_dlq", "_x", "_dlq2", "_AUDIT.T",
		// leading dot, and the dot directories
		".", "..", ".hidden", "./x", "../x",
	}
	for _, seg := range bad {
		if name, err := partition.ParseTableSegment(seg); err == nil {
			t.Errorf("ParseTableSegment(%q) = %q, want an error", seg, name)
		}
	}

	good := map[string]string{
		"SALES.ORDERS":   "SALES.ORDERS",
		"%2E":            ".",
		"%2E.":           "..",
		"%2Ehidden":      ".hidden",
		"%2E.%2F..%2Fx":  "../../x",
		"a%2Fb":          "a/b",
		"a%5Cb":          "a\\b",
		"a%3Db":          "a=b",
		"100%25":         "100%",
		"%00":            "\x00",
		"%C3%A9":         "é",
		"%FF":            "\xff",
		"x.":             "x.",
		"%5Fx":           "_x",
		"%5F_":           "__",
		"$#_-.":          "$#_-.",
		"A%20B%2FC%3DD.": "A B/C=D.",
	}
	for seg, want := range good {
		got, err := partition.ParseTableSegment(seg)
		if err != nil || got != want {
			t.Errorf("ParseTableSegment(%q) = %q, %v; want %q", seg, got, err, want)
			continue
		}
		// accepted spellings are canonical: the one TableSegment writes
		if again, _ := partition.TableSegment(got); again != seg {
			t.Errorf("ParseTableSegment accepted %q, but TableSegment(%q) = %q", seg, got, again)
		}
	}
}

// FuzzTableSegment: for any non-empty name, the segment is safe (no
// separator, control character, '=', leading dot or dot directory) and
// parses back to the name; for any string ParseTableSegment accepts,
// TableSegment gives that string back (one spelling per table).
func FuzzTableSegment(f *testing.F) {
	for _, s := range hostileNames {
		f.Add(s)
	}
	for _, s := range []string{"", "%2E", "%2e", "a%41", "%", "%C3%A9", "%2E.%2F..%2Fx"} {
		f.Add(s)
	}
	f.Add(strings.Repeat("é", 42) + "x") // 253 bytes as a segment
	f.Add(strings.Repeat("é", 43))       // 258
	f.Fuzz(func(t *testing.T, name string) {
		seg, err := partition.TableSegment(name)
		if name == "" || escapedLen(name) > partition.MaxSegmentBytes {
			if err == nil {
				t.Fatalf("TableSegment(%q) = %q, want an error", name, seg)
			}
		} else {
			if err != nil {
				t.Fatalf("TableSegment(%q): %v", name, err)
			}
			checkSafe(t, name, seg)
			back, err := partition.ParseTableSegment(seg)
			if err != nil || back != name {
				t.Fatalf("round trip of %q via %q gave %q, %v", name, seg, back, err)
			}
		}
		// the input read as a segment
		if parsed, err := partition.ParseTableSegment(name); err == nil {
			if parsed == "" {
				t.Fatalf("ParseTableSegment(%q) accepted an empty name", name)
			}
			if canon, _ := partition.TableSegment(parsed); canon != name {
				t.Fatalf("ParseTableSegment(%q) = %q, whose segment is %q: two spellings of one table", name, parsed, canon)
			}
		}
	})
}

func TestParseGranularity(t *testing.T) {
	for in, want := range map[string]partition.Granularity{
		"": partition.Daily, "day": partition.Daily, "daily": partition.Daily,
		"hour": partition.Hourly, "hourly": partition.Hourly,
	} {
		got, err := partition.ParseGranularity(in)
		if err != nil || got != want {
			t.Errorf("ParseGranularity(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"minute", "Day", "HOUR", "d", "h", " day", "month"} {
		if g, err := partition.ParseGranularity(in); err == nil {
			t.Errorf("ParseGranularity(%q) = %v, want an error", in, g)
		}
	}
}

func TestTimePartition(t *testing.T) {
	plus2 := time.FixedZone("+02:00", 2*3600)
	minus5 := time.FixedZone("-05:00", -5*3600)
	cases := []struct {
		t             time.Time
		daily, hourly string
	}{
		{time.Date(2026, 7, 13, 4, 1, 1, 123456000, time.UTC), "dt=2026-07-13", "dt=2026-07-13/hr=04"},
		{time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC), "dt=2026-07-13", "dt=2026-07-13/hr=00"},
		{time.Date(2026, 7, 13, 23, 59, 59, 999999999, time.UTC), "dt=2026-07-13", "dt=2026-07-13/hr=23"},
		// local times are converted to UTC first
		{time.Date(2026, 7, 13, 1, 30, 0, 0, plus2), "dt=2026-07-12", "dt=2026-07-12/hr=23"},
		{time.Date(2026, 12, 31, 22, 0, 0, 0, minus5), "dt=2027-01-01", "dt=2027-01-01/hr=03"},
		{time.Date(2024, 3, 1, 0, 30, 0, 0, time.FixedZone("", 3600)), "dt=2024-02-29", "dt=2024-02-29/hr=23"},
		{time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), "dt=2026-01-05", "dt=2026-01-05/hr=09"},
	}
	for _, c := range cases {
		if got := partition.Daily.TimePartition(c.t); got != c.daily {
			t.Errorf("Daily.TimePartition(%v) = %q, want %q", c.t, got, c.daily)
		}
		if got := partition.Hourly.TimePartition(c.t); got != c.hourly {
			t.Errorf("Hourly.TimePartition(%v) = %q, want %q", c.t, got, c.hourly)
		}
	}
	// The same instant in any zone lands in the same partition.
	instant := time.Date(2026, 7, 12, 23, 30, 0, 0, time.UTC)
	for _, loc := range []*time.Location{time.UTC, plus2, minus5, time.FixedZone("", 13*3600+45*60)} {
		if got := partition.Hourly.TimePartition(instant.In(loc)); got != "dt=2026-07-12/hr=23" {
			t.Errorf("instant in %v: %q", loc, got)
		}
	}
}

func TestDataDir(t *testing.T) {
	cases := []struct {
		seg     string
		version int
		part    string
		want    string
	}{
		{"SALES.ORDERS", 1, "dt=2026-07-13", "SALES.ORDERS/schema_version=1/dt=2026-07-13"},
		{"SALES.ORDERS", 12, "dt=2026-07-13/hr=04", "SALES.ORDERS/schema_version=12/dt=2026-07-13/hr=04"},
		{"%2E.%2F..%2Fx", 3, "dt=2027-01-01", "%2E.%2F..%2Fx/schema_version=3/dt=2027-01-01"},
	}
	for _, c := range cases {
		if got := partition.DataDir(c.seg, c.version, c.part); got != c.want {
			t.Errorf("DataDir(%q, %d, %q) = %q, want %q", c.seg, c.version, c.part, got, c.want)
		}
	}
	// Every segment of the path but the table is Hive-style key=value.
	p := partition.DataDir("S.T", 2, partition.Hourly.TimePartition(time.Date(2026, 7, 13, 4, 0, 0, 0, time.UTC)))
	parts := strings.Split(p, "/")
	if len(parts) != 4 || parts[0] != "S.T" {
		t.Fatalf("DataDir = %q", p)
	}
	for _, s := range parts[1:] {
		if k, v, ok := strings.Cut(s, "="); !ok || k == "" || v == "" {
			t.Errorf("segment %q of %q is not key=value", s, p)
		}
	}
}

func TestDataFileName(t *testing.T) {
	// a run's files: named by it too, still in offset order
	if got, want := partition.DataFileName("orders-3", 42, "0a1b2c3d"), "part-orders-3-00000000000000000042-0a1b2c3d.parquet"; got != want {
		t.Errorf("DataFileName = %q, want %q", got, want)
	}
	if partition.DataFileName("1", 9, "ffffffff") >= partition.DataFileName("1", 10, "00000000") {
		t.Error("names of one run's files do not sort by first offset")
	}
	if got, want := partition.DataFileName("0", 42, ""), "part-0-00000000000000000042.parquet"; got != want {
		t.Errorf("DataFileName = %q, want %q", got, want)
	}
	if got, want := partition.DataFileName("orders-3", 0, ""), "part-orders-3-00000000000000000000.parquet"; got != want {
		t.Errorf("DataFileName = %q, want %q", got, want)
	}
	if got, want := partition.DataFileName("7", math.MaxInt64, ""), "part-7-09223372036854775807.parquet"; got != want {
		t.Errorf("DataFileName = %q, want %q", got, want)
	}

	// Names sort in offset order within a partition.
	offsets := []int64{0, 1, 2, 9, 10, 11, 99, 100, 101, 999, 1000, 123456789, 1 << 32, 1e15, 1e18, math.MaxInt64}
	var names []string
	for _, o := range offsets {
		n := partition.DataFileName("5", o, "")
		if len(n) != len("part-5-")+20+len(".parquet") {
			t.Errorf("DataFileName(5, %d) = %q is not zero padded to 20 digits", o, n)
		}
		names = append(names, n)
	}
	shuffled := append([]string(nil), names...)
	rand.New(rand.NewSource(2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	sort.Strings(shuffled)
	for i := range names {
		if shuffled[i] != names[i] {
			t.Fatalf("lexical order differs from offset order at %d: %q vs %q", i, shuffled[i], names[i])
		}
	}
	// Same range, same name (a rewrite replaces itself); different ranges differ.
	if partition.DataFileName("1", 5, "") != partition.DataFileName("1", 5, "") ||
		partition.DataFileName("1", 5, "") == partition.DataFileName("1", 6, "") ||
		partition.DataFileName("1", 5, "") == partition.DataFileName("2", 5, "") {
		t.Errorf("DataFileName is not a function of (partition, offset)")
	}
}

func TestSchemaKey(t *testing.T) {
	cases := []struct {
		seg     string
		version int
		want    string
	}{
		{"SALES.ORDERS", 1, "_schemas/SALES.ORDERS/v1.json"},
		{"SALES.ORDERS", 10, "_schemas/SALES.ORDERS/v10.json"},
		{"%2E.", 2, "_schemas/%2E./v2.json"},
	}
	for _, c := range cases {
		if got := partition.SchemaKey(c.seg, c.version); got != c.want {
			t.Errorf("SchemaKey(%q, %d) = %q, want %q", c.seg, c.version, got, c.want)
		}
	}
}

func TestDLQKey(t *testing.T) {
	plus2 := time.FixedZone("+02:00", 2*3600)
	cases := []struct {
		day    time.Time
		part   string
		offset int64
		run    string
		want   string
	}{
		{time.Date(2026, 7, 13, 4, 0, 0, 0, time.UTC), "0", 17, "0a1b2c3d", "_dlq/dt=2026-07-13/0-00000000000000000017-0a1b2c3d.jsonl"},
		// the UTC date, not the local one
		{time.Date(2026, 7, 13, 1, 30, 0, 0, plus2), "orders-2", 0, "0a1b2c3d", "_dlq/dt=2026-07-12/orders-2-00000000000000000000-0a1b2c3d.jsonl"},
		{time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), "stdin", math.MaxInt64, "ffffffff", "_dlq/dt=2026-12-31/stdin-09223372036854775807-ffffffff.jsonl"},
		// no run: the name without one
		{time.Date(2026, 7, 13, 4, 0, 0, 0, time.UTC), "0", 17, "", "_dlq/dt=2026-07-13/0-00000000000000000017.jsonl"},
	}
	for _, c := range cases {
		if got := partition.DLQKey(c.day, c.part, c.offset, c.run); got != c.want {
			t.Errorf("DLQKey(%v, %q, %d, %q) = %q, want %q", c.day, c.part, c.offset, c.run, got, c.want)
		}
	}
	a := partition.DLQKey(time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC), "0", 9, "ffffffff")
	b := partition.DLQKey(time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC), "0", 10, "00000000")
	if !(a < b) {
		t.Errorf("DLQ keys do not sort by offset: %q >= %q", a, b)
	}
}

// TestLegacyUnderscoreFolderSaysWhereToMoveIt: a folder "_X" written
// before a leading '_' was escaped is refused with the folder to move it
// to.
func TestLegacyUnderscoreFolderSaysWhereToMoveIt(t *testing.T) {
	_, err := partition.ParseTableSegment("_AUDIT.T")
	if err == nil || !strings.Contains(err.Error(), `"%5FAUDIT.T"`) || !strings.Contains(err.Error(), "_schemas/_AUDIT.T") {
		t.Errorf("ParseTableSegment(\"_AUDIT.T\"): %v, want an error naming %%5FAUDIT.T and _schemas/_AUDIT.T", err)
	}
}
