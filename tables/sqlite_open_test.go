package tables

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

// TestSQLiteCatalogOpenedAtOnce: instances that open one new SQLite
// catalog at the same moment all get it. The connection that sets WAL
// mode a moment after another has could be answered SQLITE_BUSY at once,
// before the busy timeout applies, which failed its instance's run.
func TestSQLiteCatalogOpenedAtOnce(t *testing.T) {
	for round := range 150 {
		dir := t.TempDir()
		cfg := Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "wh")}.withDefaults()
		var wg sync.WaitGroup
		errs := make([]error, 3)
		start := make(chan struct{})
		for i := range errs {
			wg.Go(func() {
				<-start
				cat, err := openCatalog(context.Background(), cfg)
				if err == nil {
					cat.(*ownedDB).Close()
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, instance %d: %v", round, i, err)
			}
		}
	}
}
