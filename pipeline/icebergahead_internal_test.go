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
	ice, pub, version := aheadFixture(t)
	cat := arrowschema.NewCatalog(arrowschema.Options{})
	const n = 20
	written := make([]*arrowschema.Version, n)
	for i := range n {
		table := fmt.Sprintf("S.T%d", i)
		version(cat, table)
		ev, err := cat.ApplyDDL(table, "ALTER TABLE "+table+" RENAME COLUMN NAME TO LABEL", "p1", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		ice.noteVersion(ev.Version)
		written[i] = ev.Version
	}
	for _, v := range written {
		ice.prepareAhead(v)
		ice.prepareAhead(v) // a second first row (a converter made again) starts nothing more
	}
	// Wait for every preparation (without taking it, as a flush would).
	for _, v := range written {
		ice.ahead.mu.Lock()
		p := ice.ahead.pending[v]
		ice.ahead.mu.Unlock()
		if p == nil {
			t.Fatalf("%s: no preparation started ahead", v.Table)
		}
		<-p.done
	}

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

// aheadFixture is a table preparer over a new SQLite catalog, and a
// maker of first versions of tables.
func aheadFixture(t *testing.T) (*icebergTables, *tables.Publisher, func(cat *arrowschema.Catalog, table string) *arrowschema.Version) {
	t.Helper()
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
	t.Cleanup(func() { pub.Close() })
	ice := newIcebergTables(ctx, pub, st, "run", slog.New(slog.DiscardHandler))
	t.Cleanup(ice.ahead.close)
	version := func(cat *arrowschema.Catalog, table string) *arrowschema.Version {
		ev, err := cat.ApplyMetadata(cdc.TableMetadata{Table: table, Columns: []cdc.Column{
			{Name: "ID", Type: "number", Key: true}, {Name: "NAME", Type: "string", Nullable: true}}}, "p0", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		ice.noteVersion(ev.Version)
		return ev.Version
	}
	return ice, pub, version
}

// waitFor fails the test if done does not close within a minute: the
// event waited for would otherwise never come.
func waitFor(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s: still waiting after a minute", what)
	}
}

// TestAFlushDoesNotWaitForQueuedPreparations: a version's first file
// that comes before its preparation got a turn (the others ahead of it
// hold every slot) prepares the table itself instead of waiting behind
// them, and the queued preparation then does nothing.
func TestAFlushDoesNotWaitForQueuedPreparations(t *testing.T) {
	ice, pub, version := aheadFixture(t)
	for range prepareAheadConcurrency {
		ice.ahead.slots <- struct{}{} // preparations of other tables, in flight
	}
	v := version(arrowschema.NewCatalog(arrowschema.Options{}), "S.QUEUED")
	ice.prepareAhead(v)
	done := make(chan struct{})
	var sc *arrow.Schema
	var err error
	go func() {
		defer close(done)
		sc, err = ice.fileSchema(v)
	}()
	waitFor(t, done, "the first file of a version whose preparation is queued")
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := sc.FieldsByName("NAME"); !ok || fieldID(id[0]) == 0 {
		t.Fatalf("the file's schema has no field IDs: %v", sc)
	}
	for range prepareAheadConcurrency {
		<-ice.ahead.slots
	}
	ice.ahead.close()
	if _, err := pub.LoadTable(context.Background(), "S.QUEUED"); err != nil {
		t.Fatal(err)
	}
}

// TestClosingStopsQueuedPreparations: a run that stops early does not
// wait for the preparations still queued, nor create their tables.
func TestClosingStopsQueuedPreparations(t *testing.T) {
	ice, pub, version := aheadFixture(t)
	for range prepareAheadConcurrency {
		ice.ahead.slots <- struct{}{}
	}
	ice.prepareAhead(version(arrowschema.NewCatalog(arrowschema.Options{}), "S.LATE"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		ice.ahead.close()
	}()
	waitFor(t, done, "closing with a preparation queued")
	for range prepareAheadConcurrency {
		<-ice.ahead.slots
	}
	if _, err := pub.LoadTable(context.Background(), "S.LATE"); err == nil {
		t.Error("a preparation queued when the run stopped created its table")
	}
	after := version(arrowschema.NewCatalog(arrowschema.Options{}), "S.AFTER")
	ice.prepareAhead(after)
	if ice.ahead.pending[after] != nil {
		t.Error("a preparation started after close")
	}
}

// TestPartitionsShareAVersionsPreparation: the versions each Kafka
// partition's catalog makes for one source version (same table, number
// and columns) share one preparation; a version of the same number with
// other columns gets its own.
func TestPartitionsShareAVersionsPreparation(t *testing.T) {
	ice, _, version := aheadFixture(t)
	for range prepareAheadConcurrency {
		ice.ahead.slots <- struct{}{} // so that none starts while the test looks
	}
	a := version(arrowschema.NewCatalog(arrowschema.Options{}), "S.SHARED")
	b := version(arrowschema.NewCatalog(arrowschema.Options{}), "S.SHARED")
	if a == b {
		t.Fatal("the two catalogs gave one version")
	}
	ev, err := arrowschema.NewCatalog(arrowschema.Options{}).ApplyMetadata(cdc.TableMetadata{Table: "S.SHARED", Columns: []cdc.Column{
		{Name: "ID", Type: "number", Key: true}, {Name: "OTHER", Type: "string", Nullable: true}}}, "p0", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	other := ev.Version
	ice.prepareAhead(a)
	ice.prepareAhead(b)
	ice.prepareAhead(other)
	ice.ahead.mu.Lock()
	shared := ice.ahead.pending[a] != nil && ice.ahead.pending[a] == ice.ahead.pending[b]
	own := ice.ahead.pending[other] != nil && ice.ahead.pending[other] != ice.ahead.pending[a]
	ice.ahead.mu.Unlock()
	if !shared {
		t.Error("two partitions' versions of one source version got a preparation each")
	}
	if !own {
		t.Error("a version of the same number with other columns shares another's preparation")
	}
	ice.ahead.take(other) // claimed: not prepared, its columns are not the table's
	for range prepareAheadConcurrency {
		<-ice.ahead.slots
	}
	for _, v := range []*arrowschema.Version{a, b} {
		if _, err := ice.fileSchema(v); err != nil {
			t.Fatal(err)
		}
	}
}
