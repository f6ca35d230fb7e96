package tables

import (
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// metadataAt is a table state with the given sequence number and last
// update time.
func metadataAt(t *testing.T, seq, updatedMs int64) *table.Table {
	t.Helper()
	meta, err := table.ParseMetadataString(fmt.Sprintf(`{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1",
		"location":"s3://b/t","last-sequence-number":%d,"last-updated-ms":%d,"last-column-id":1,
		"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","required":false,"type":"long"}]}],"current-schema-id":0,
		"partition-specs":[{"spec-id":0,"fields":[]}],"default-spec-id":0,"last-partition-id":999,
		"sort-orders":[{"order-id":0,"fields":[]}],"default-sort-order-id":0}`, seq, updatedMs))
	if err != nil {
		t.Fatal(err)
	}
	return table.New(table.Identifier{"S", "T"}, meta, fmt.Sprintf("s3://b/t/metadata/%d.json", seq), nil, nil)
}

// TestLoadedKeepsTheLaterState: the cache keeps the state with more
// snapshots committed even when its writer's clock is behind (another
// host's commit stamped later), and between states of one snapshot the
// later update.
func TestLoadedKeepsTheLaterState(t *testing.T) {
	ident := table.Identifier{"S", "T"}
	var l loadedTables
	ours := metadataAt(t, 7, 1_000)  // our commit, on a host whose clock is behind
	stale := metadataAt(t, 6, 5_000) // loaded before it, committed on a host ahead
	l.put(ident, ours)
	l.put(ident, stale)
	if got := l.get(ident); got != ours {
		t.Errorf("kept sequence number %d, want 7", got.Metadata().LastSequenceNumber())
	}
	schemaChange := metadataAt(t, 7, 2_000)
	l.put(ident, schemaChange)
	if got := l.get(ident); got != schemaChange {
		t.Errorf("kept the state updated at %d, want the later one at 2000", got.Metadata().LastUpdatedMillis())
	}
}

// TestLoadedCountsTheTablesHeld: TablesHeld hears the number of tables
// kept each time it changes (the process's memory limit follows it), not
// for a newer state of a table already kept.
func TestLoadedCountsTheTablesHeld(t *testing.T) {
	var heard []int
	l := loadedTables{held: func(n int) { heard = append(heard, n) }}
	a, b := table.Identifier{"S", "A"}, table.Identifier{"S", "B"}
	l.put(a, metadataAt(t, 1, 1_000))
	l.put(b, metadataAt(t, 1, 1_000))
	l.put(a, metadataAt(t, 2, 2_000)) // a newer state of a table kept
	l.forget(b)
	l.forget(b) // not kept any more
	if want := []int{1, 2, 1}; fmt.Sprint(heard) != fmt.Sprint(want) {
		t.Errorf("heard %v, want %v", heard, want)
	}
}
