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
	mark, marked, bad, err := readCatalogMark(ctx, st)
	switch {
	case err != nil:
		return err
	case !marked && cat == nil, marked && cat != nil:
		return nil
	case !marked:
		data, _ := json.Marshal(catalogMark{Kind: string(cat.Kind), Since: now.UTC()})
		if err := st.Put(ctx, catalogMarkKey, data); err != nil {
			return fmt.Errorf("mark the lake as published to an Iceberg catalog (%s): %w", catalogMarkKey, err)
		}
		return nil
	case bad != nil:
		return fmt.Errorf("%s is corrupt (%v): restore it, or delete it to stop publishing this lake's tables", catalogMarkKey, bad)
	}
	return fmt.Errorf("%w (--catalog %s, since %s): give the run the same --catalog flags; without them its files would never reach the tables, and `exporter maintain` would delete them as orphans. To stop publishing the tables for good, delete %s from the sink",
		ErrCatalogExpected, mark.Kind, mark.Since.Format(time.RFC3339), catalogMarkKey)
}

// PublishedCatalog reports whether the sink's tables are published to an
// Iceberg catalog, and of which kind ("" when the mark cannot be read):
// readers of its folders then need to know that maintenance rewrites
// them.
func PublishedCatalog(ctx context.Context, st Store) (kind string, ok bool, err error) {
	mark, marked, bad, err := readCatalogMark(ctx, st)
	if err != nil || !marked || bad != nil {
		return "", marked, err
	}
	return mark.Kind, true, nil
}

// readCatalogMark reads the mark: marked tells whether there is one, and
// bad why it is not valid JSON.
func readCatalogMark(ctx context.Context, st Store) (mark catalogMark, marked bool, bad, err error) {
	data, err := st.Get(ctx, catalogMarkKey)
	if errors.Is(err, store.ErrNotExist) {
		return mark, false, nil, nil
	}
	if err != nil {
		return mark, false, nil, fmt.Errorf("read %s: %w", catalogMarkKey, err)
	}
	bad = json.Unmarshal(data, &mark)
	return mark, true, bad, nil
}
