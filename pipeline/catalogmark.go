package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// ErrOtherCatalog is wrapped by Run's error (and maintain's) when the
// sink's tables are published to another Iceberg catalog than the run's.
var ErrOtherCatalog = errors.New("this lake's tables are published to another Iceberg catalog than the run's")

type catalogMark struct {
	Kind string `json:"kind"`
	// Catalog is the catalog's identity (tables.Config.Identity); empty
	// in marks of earlier versions, which the next run completes.
	Catalog string    `json:"catalog,omitempty"`
	Since   time.Time `json:"since"`
}

// checkCatalogMark writes the mark at the first run with a catalog, and
// refuses a run without one on a marked lake.
func checkCatalogMark(ctx context.Context, st Store, cat *tables.Config, now time.Time) error {
	mark, marked, bad, err := readCatalogMark(ctx, st)
	switch {
	case err != nil:
		return err
	case !marked && cat == nil:
		return nil
	case !marked:
		return writeCatalogMark(ctx, st, cat, now.UTC())
	case bad != nil:
		return fmt.Errorf("%s is corrupt (%v): restore it, or delete it to stop publishing this lake's tables", catalogMarkKey, bad)
	case cat != nil && mark.Catalog == "":
		// A mark of an earlier version names the kind alone: a catalog
		// of that kind completes it.
		if mark.Kind != string(cat.Kind) {
			return otherCatalog(mark.Kind, string(cat.Kind))
		}
		return writeCatalogMark(ctx, st, cat, mark.Since)
	case cat != nil:
		return sameCatalog(st, mark, cat)
	}
	return fmt.Errorf("%w (--catalog %s, since %s): give the run the same --catalog flags; without them its files would never reach the tables, and `exporter maintain` would delete them as orphans. To stop publishing the tables for good, delete %s from the sink",
		ErrCatalogExpected, mark.Kind, mark.Since.Format(time.RFC3339), catalogMarkKey)
}

// writeCatalogMark marks the lake as published to cat since since.
func writeCatalogMark(ctx context.Context, st Store, cat *tables.Config, since time.Time) error {
	data, _ := json.Marshal(catalogMark{Kind: string(cat.Kind), Catalog: catalogIdentity(st, cat), Since: since})
	if err := st.Put(ctx, catalogMarkKey, data); err != nil {
		return fmt.Errorf("mark the lake as published to an Iceberg catalog (%s): %w", catalogMarkKey, err)
	}
	return nil
}

// sameCatalog refuses a catalog other than the one the mark names.
func sameCatalog(st Store, mark catalogMark, cat *tables.Config) error {
	if id := catalogIdentity(st, cat); mark.Catalog != "" && id != mark.Catalog {
		return otherCatalog(mark.Catalog, id)
	}
	return nil
}

func otherCatalog(lakes, runs string) error {
	return fmt.Errorf("%w: the lake's mark (%s) names %q, the run %q. Through the run's catalog, its files would reach tables the lake's catalog does not have, and `exporter maintain` through the lake's would delete them as orphans (through the run's, it would delete the lake's files). Give it the lake's catalog flags; if the run's catalog is the same one reached another way (a new host name, a moved file), delete %s and the next run marks the lake with it",
		ErrOtherCatalog, catalogMarkKey, lakes, runs, catalogMarkKey)
}

// catalogIdentity is the catalog's identity with the sink's own location
// written {sink}: a catalog kept inside the lake (the default warehouse,
// a SQLite file in it) stays the same catalog when the lake is mounted
// or copied elsewhere.
func catalogIdentity(st Store, cat *tables.Config) string {
	id := cat.Identity()
	root := strings.TrimSuffix(st.String(), "/")
	id = strings.ReplaceAll(id, root+"/", "{sink}/")
	if dir, ok := strings.CutPrefix(root, "file://"); ok {
		id = strings.ReplaceAll(id, dir+"/", "{sink}/")
	}
	return id
}

// CheckPublishedTo refuses a catalog other than the one the sink's
// tables are published to, as far as the sink's mark names it (a lake
// without a mark, or with one of an earlier version, passes). For
// commands that read or rewrite the tables but do not export.
func CheckPublishedTo(ctx context.Context, st Store, cat *tables.Config) error {
	mark, marked, bad, err := readCatalogMark(ctx, st)
	if err != nil || !marked || bad != nil {
		return err
	}
	return sameCatalog(st, mark, cat)
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

// PublishedSince reports when the sink's tables began to be published to
// their Iceberg catalog (the lake's mark), and whether they are: files
// older than it were exported before, and are not the tables' orphans.
func PublishedSince(ctx context.Context, st Store) (time.Time, bool, error) {
	mark, marked, bad, err := readCatalogMark(ctx, st)
	if err != nil || !marked {
		return time.Time{}, false, err
	}
	if bad != nil {
		return time.Time{}, false, fmt.Errorf("%s is corrupt (%v): restore it, or delete it and run the exporter with its catalog to mark the lake again", catalogMarkKey, bad)
	}
	return mark.Since, true, nil
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
