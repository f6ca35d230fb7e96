package tables

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
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

// TestFlattenedNamesThatCollideAreRefused: with a catalog namespace, the
// source tables A.B_C and A_B.C both flatten to table A_B_C. The second
// is refused (a bad table name for the dead letters), in the process that
// saw the first and in a later one that finds the table created for it,
// instead of writing its files into the other's table.
func TestFlattenedNamesThatCollideAreRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "c.db"), Warehouse: "file://" + filepath.Join(dir, "wh"), Namespace: "NS"}
	first, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := first.PrepareVersion(ctx, TableVersion{Table: "A.B_C", Version: 1, Schema: sourceSchema(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Identifier("A_B.C"); !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), `"A.B_C"`) {
		t.Errorf("the second name in the same process: %v, want ErrBadName naming A.B_C", err)
	}
	later, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer later.Close()
	if _, err := later.PrepareVersion(ctx, TableVersion{Table: "A_B.C", Version: 1, Schema: sourceSchema(1)}); !errors.Is(err, ErrBadName) {
		t.Errorf("the second name in a later process: %v, want ErrBadName", err)
	}
	if _, err := later.PrepareVersion(ctx, TableVersion{Table: "A.B_C", Version: 1, Schema: sourceSchema(1)}); err != nil {
		t.Errorf("the first name in a later process: %v", err)
	}
}
