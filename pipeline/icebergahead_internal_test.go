package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// TestTablesArePreparedAheadOfTheirFirstFile: a version's table is
// created, and its schema evolved through every version opened before it,
// in the background once the writer hears of the version's first row;
// the version's first file then takes that schema, with the table's field
// IDs. Twenty tables at once, each with a version never written (the
// second, a rename, must keep the renamed column's field ID).
func TestTablesArePreparedAheadOfTheirFirstFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.NewLocal(filepath.Join(dir, "lake"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := tables.Open(ctx, tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"),
		Warehouse: "file://" + filepath.Join(dir, "wh")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	ice := newIcebergTables(ctx, pub, st, "run", slog.New(slog.DiscardHandler))

	cat := arrowschema.NewCatalog(arrowschema.Options{})
	const n = 20
	written := make([]*arrowschema.Version, n)
	for i := range n {
		table := fmt.Sprintf("S.T%d", i)
		ev, err := cat.ApplyMetadata(cdc.TableMetadata{Table: table, Columns: []cdc.Column{
			{Name: "ID", Type: "number", Key: true}, {Name: "NAME", Type: "string", Nullable: true}}}, "p0", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		ice.noteVersion(ev.Version)
		if ev, err = cat.ApplyDDL(table, "ALTER TABLE "+table+" RENAME COLUMN NAME TO LABEL", "p1", time.Time{}); err != nil {
			t.Fatal(err)
		}
		ice.noteVersion(ev.Version)
		written[i] = ev.Version
	}
	for _, v := range written {
		ice.prepareAhead(v)
		ice.prepareAhead(v) // a second first row (a converter made again) starts nothing more
	}
	// Waits for the preparations in flight; their results stay for the
	// files.
	ice.ahead.close()

	for i, v := range written {
		tbl, err := pub.LoadTable(ctx, v.Table)
		if err != nil {
			t.Fatalf("%s: no table after its version was prepared ahead: %v", v.Table, err)
		}
		ids := map[string]int{}
		for _, sc := range tbl.Metadata().Schemas() {
			for _, name := range []string{"NAME", "LABEL"} {
				if f, ok := sc.FindFieldByName(name); ok {
					ids[name] = f.ID
				}
			}
		}
		if len(tbl.Metadata().Schemas()) != 2 || ids["NAME"] == 0 || ids["NAME"] != ids["LABEL"] {
			t.Errorf("%s: %d schemas, field IDs %v; want two, LABEL keeping NAME's ID", v.Table, len(tbl.Metadata().Schemas()), ids)
		}
		sc, err := ice.fileSchema(v)
		if err != nil {
			t.Fatal(err)
		}
		label, ok := sc.FieldsByName("LABEL")
		if !ok || fieldID(label[0]) != ids["LABEL"] {
			t.Errorf("table %d: the first file's LABEL column has field ID %v, want the table's %d", i, label, ids["LABEL"])
		}
	}
}

func fieldID(f arrow.Field) int {
	s, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0
	}
	id, _ := strconv.Atoi(s)
	return id
}
