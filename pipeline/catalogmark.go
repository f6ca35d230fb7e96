package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// catalogMarkKey marks a lake whose tables are published to an Iceberg
// catalog. A run without the catalog would write files that the tables
// never get while its checkpoints count their records as exported; the
// maintenance pass would then delete those files as orphans, and the
// records with them. So such a run is refused.
const catalogMarkKey = "_checkpoints/iceberg-catalog.json"

// ErrCatalogExpected is wrapped by Run's error when the sink's tables
// are published to an Iceberg catalog and the run was given none.
var ErrCatalogExpected = errors.New("this lake's tables are published to an Iceberg catalog, and the run has none")

type catalogMark struct {
	Kind  string    `json:"kind"`
	Since time.Time `json:"since"`
}

// checkCatalogMark writes the mark at the first run with a catalog, and
// refuses a run without one on a marked lake.
func checkCatalogMark(ctx context.Context, st Store, cat *tables.Config, now time.Time) error {
	data, err := st.Get(ctx, catalogMarkKey)
	switch {
	case errors.Is(err, store.ErrNotExist):
		if cat == nil {
			return nil
		}
		mark, _ := json.Marshal(catalogMark{Kind: string(cat.Kind), Since: now.UTC()})
		if err := st.Put(ctx, catalogMarkKey, mark); err != nil {
			return fmt.Errorf("mark the lake as published to an Iceberg catalog (%s): %w", catalogMarkKey, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read %s: %w", catalogMarkKey, err)
	case cat != nil:
		return nil
	}
	var mark catalogMark
	if err := json.Unmarshal(data, &mark); err != nil {
		return fmt.Errorf("%s is corrupt (%v): restore it, or delete it to stop publishing this lake's tables", catalogMarkKey, err)
	}
	return fmt.Errorf("%w (--catalog %s, since %s): give the run the same --catalog flags; without them its files would never reach the tables, and `exporter maintain` would delete them as orphans. To stop publishing the tables for good, delete %s from the sink",
		ErrCatalogExpected, mark.Kind, mark.Since.Format(time.RFC3339), catalogMarkKey)
}

// PublishedCatalog reports whether the sink's tables are published to an
// Iceberg catalog, and of which kind: readers of its folders then need to
// know that maintenance rewrites them.
func PublishedCatalog(ctx context.Context, st Store) (kind string, ok bool, err error) {
	data, err := st.Get(ctx, catalogMarkKey)
	if errors.Is(err, store.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", catalogMarkKey, err)
	}
	var mark catalogMark
	if err := json.Unmarshal(data, &mark); err != nil {
		return "", true, nil // published, the kind unknown: checkCatalogMark says how to mend it
	}
	return mark.Kind, true, nil
}
