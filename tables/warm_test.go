package tables

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// loadCounter counts the catalog's table loads, by table.
type loadCounter struct {
	catalog.Catalog
	mu    sync.Mutex
	loads map[string]int
}

func (c *loadCounter) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	c.mu.Lock()
	c.loads[strings.Join(ident, ".")]++
	c.mu.Unlock()
	return c.Catalog.LoadTable(ctx, ident)
}

// TestTablesOfANamespaceAreLoadedAhead: the first table of a namespace
// that a run checks starts loading the namespace's other tables in the
// background, each once, so that checking them later needs no load; a
// table loaded ahead that another source table created is still refused.
func TestTablesOfANamespaceAreLoadedAhead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "wh"), Namespace: "cdc"}
	creator, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		if _, err := creator.PrepareVersion(ctx, TableVersion{Table: fmt.Sprintf("SALES.T%d", i), Version: 1, Schema: sourceSchema(1)}); err != nil {
			t.Fatal(err)
		}
	}
	creator.Close()

	counter := &loadCounter{loads: map[string]int{}}
	wrapped := cfg
	wrapped.WrapCatalog = func(c catalog.Catalog) catalog.Catalog { counter.Catalog = c; return counter }
	var held int
	wrapped.TablesHeld = func(k int) { held = k } // called under the cache's lock
	p, err := Open(ctx, wrapped, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.CheckSource(ctx, "SALES.T0"); err != nil {
		t.Fatal(err)
	}
	p.warm.wg.Wait() // the namespace's loads ahead are done
	if held != n {
		t.Fatalf("%d tables loaded after checking the first of %d", held, n)
	}
	for i := 1; i < n; i++ {
		if err := p.CheckSource(ctx, fmt.Sprintf("SALES.T%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if got := counter.loads[fmt.Sprintf("cdc.SALES_T%d", i)]; got != 1 {
			t.Errorf("table SALES_T%d loaded %d times, want once", i, got)
		}
	}
	// SALES_T5 (one part) flattens to the table of SALES.T5.
	if err := p.CheckSource(ctx, "SALES_T5"); !errors.Is(err, ErrBadName) {
		t.Fatalf("a source table whose Iceberg name is another's table, loaded ahead: %v, want ErrBadName", err)
	}
}

// listCounter counts the catalog's namespace listings.
type listCounter struct {
	catalog.Catalog
	mu    sync.Mutex
	lists int
}

func (c *listCounter) ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.Catalog.ListTables(ctx, ns)
}

// TestNoTablesAreLoadedAheadAfterClose: a table checked once the
// publisher is closing starts no background loads on the catalog being
// closed (and no goroutine the close would not wait for).
func TestNoTablesAreLoadedAheadAfterClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := Open(ctx, Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "wh"), Namespace: "cdc"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	counter := &listCounter{Catalog: p.cat}
	p.cat = counter
	p.warm.close()
	p.warmNamespace(table.Identifier{"cdc", "ORDERS"})
	p.warm.wg.Wait()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if counter.lists != 0 {
		t.Fatalf("a namespace was listed %d times after the loads ahead were closed", counter.lists)
	}
}
