package tables

import (
	"errors"
	"testing"
)

// TestLocationsReadAsOtherPaths: names and folders that Iceberg readers
// would take for other paths are refused ('#' and '?' everywhere; on
// local storage, escapes and what a URL path escapes), the others kept.
func TestLocationsReadAsOtherPaths(t *testing.T) {
	local := &Publisher{cfg: Config{Kind: Hadoop, Warehouse: "file:///lake/_iceberg"}}
	s3 := &Publisher{cfg: Config{Kind: SQL, Warehouse: "s3://bucket/lake/_iceberg"}}
	for _, c := range []struct {
		table         string
		localOK, s3OK bool
		folder        string // its layout segment
		folderLocalOK bool
		folderS3OK    bool
	}{
		{"SALES.ORDERS", true, true, "SALES.ORDERS", true, true},
		{"SALES.ORD$X", true, true, "SALES.ORD$X", true, true},
		{"SALES.ORDERS#ARCH", false, false, "SALES.ORDERS#ARCH", false, false},
		{"SALES.ORDER ITEMS", false, true, "SALES.ORDER%20ITEMS", false, true},
		{"SALES.ÄNDERUNG", false, true, "SALES.%C3%84NDERUNG", false, true},
		{"SALES.A?B", false, false, "SALES.A%3FB", false, true},
	} {
		for _, p := range []struct {
			pub  *Publisher
			want bool
		}{{local, c.localOK}, {s3, c.s3OK}} {
			_, err := p.pub.Identifier(c.table)
			if (err == nil) != p.want || (err != nil && !errors.Is(err, ErrBadName)) {
				t.Errorf("Identifier(%q) with warehouse %s: %v, want ok=%v", c.table, p.pub.cfg.Warehouse, err, p.want)
			}
		}
		if err := CheckDataFolder("file:///lake", c.folder); (err == nil) != c.folderLocalOK {
			t.Errorf("CheckDataFolder(file:///lake, %q): %v, want ok=%v", c.folder, err, c.folderLocalOK)
		}
		if err := CheckDataFolder("s3://bucket/lake", c.folder); (err == nil) != c.folderS3OK {
			t.Errorf("CheckDataFolder(s3://bucket/lake, %q): %v, want ok=%v", c.folder, err, c.folderS3OK)
		}
	}
	for loc, ok := range map[string]bool{
		"file:///home/me/lake":       true,
		"file:///home/me/my lake":    false,
		"file:///data/50%25":         false,
		"s3://bucket/my lake/prefix": true,
		"s3://bucket/a#b":            false,
	} {
		if err := CheckLocation(loc); (err == nil) != ok {
			t.Errorf("CheckLocation(%q): %v, want ok=%v", loc, err, ok)
		}
	}
	if err := (Config{Kind: Hadoop, Warehouse: "file:///home/me/my lake/_iceberg"}).Validate(); err == nil {
		t.Error("a warehouse folder with a space passed Validate")
	}
}
