package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/lakehouse-exporter/lakehouse-exporter/lakeview"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

type tablesCmd struct {
	sinkFlags    `embed:""`
	catalogFlags `embed:""`
}

type schemaCmd struct {
	sinkFlags `embed:""`
	Table     string `arg:"" help:"Qualified table name, e.g. SALES.ORDERS."`
	Version   int    `help:"Show this schema version in full (default: the history of all versions and the newest in full)." env:"EXPORTER_SCHEMA_VERSION"`
}

// openRegistry opens the sink and reads its schema registry.
func (f *sinkFlags) openRegistry(ctx context.Context, logger *slog.Logger) (sink, map[string][]lakeview.VersionDoc, error) {
	st, err := f.openLake(ctx, logger)
	if err != nil {
		return nil, nil, err
	}
	versions, err := lakeview.ReadRegistry(ctx, st)
	return st, versions, err
}

func (c *tablesCmd) run(ctx context.Context, stdout io.Writer, logger *slog.Logger) error {
	st, versions, err := c.openRegistry(ctx, logger)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(versions))
	for t := range versions {
		names = append(names, t)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tVERSIONS\tFILES\tROWS\tLAST POSITION")
	for _, t := range names {
		seg, err := partition.TableSegment(t)
		if err != nil {
			continue
		}
		keys, err := st.List(ctx, seg+"/")
		if err != nil {
			return err
		}
		var files, rows int64
		var lastOffset int64 = -1
		lastPos := ""
		for _, k := range keys {
			if !strings.HasSuffix(k, ".parquet") {
				continue
			}
			data, err := st.Get(ctx, k)
			if err != nil {
				return err
			}
			r, err := file.NewParquetReader(bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			files++
			rows += r.NumRows()
			kv := r.MetaData().KeyValueMetadata()
			if off, err := strconv.ParseInt(valueOf(kv.FindValue("lakehouse.last_offset")), 10, 64); err == nil && off > lastOffset {
				lastOffset, lastPos = off, valueOf(kv.FindValue("lakehouse.last_pos"))
			}
			r.Close()
		}
		vs := versions[t]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", termSafe(t, false), vs[len(vs)-1].Version, files, rows, termSafe(lastPos, false))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !c.catalogFlags.given() {
		return nil
	}
	states, err := c.catalogFlags.states(ctx, st, names, logger)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	return printStates(stdout, states)
}

// states opens the catalog the flags name and reads the current snapshot
// of each source table's Iceberg table.
func (f *catalogFlags) states(ctx context.Context, st sink, names []string, logger *slog.Logger) ([]tables.State, error) {
	cfg, err := f.readConfig(ctx, st)
	if err != nil {
		return nil, err
	}
	pub, err := tables.Open(ctx, *cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("open the Iceberg catalog: %w", err)
	}
	defer pub.Close()
	out := make([]tables.State, 0, len(names))
	for _, name := range names {
		s, err := pub.State(ctx, name)
		if errors.Is(err, tables.ErrBadName) {
			continue // never published: its records went to the dead letters
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// printStates prints the Iceberg side of the tables: current snapshot,
// its commit time, rows and data files by its summary, metadata file.
func printStates(w io.Writer, states []tables.State) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tICEBERG TABLE\tSNAPSHOT\tCOMMITTED\tROWS\tDATA FILES\tMETADATA")
	count := func(n int64) string {
		if n < 0 {
			return "?"
		}
		return strconv.FormatInt(n, 10)
	}
	for _, s := range states {
		ident := termSafe(strings.Join(s.Identifier, "."), false)
		switch {
		case !s.Exists:
			fmt.Fprintf(tw, "%s\t%s\t(not in the catalog)\t\t\t\t\n", termSafe(s.Table, false), ident)
		case s.SnapshotID == 0:
			fmt.Fprintf(tw, "%s\t%s\t(no snapshot)\t\t0\t0\t%s\n", termSafe(s.Table, false), ident, termSafe(s.MetadataLocation, false))
		default:
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", termSafe(s.Table, false), ident, s.SnapshotID,
				s.CommittedAt.Format(time.RFC3339Nano), count(s.Rows), count(s.DataFiles), termSafe(s.MetadataLocation, false))
		}
	}
	return tw.Flush()
}

func valueOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (c *schemaCmd) run(ctx context.Context, stdout io.Writer, logger *slog.Logger) error {
	st, versions, err := c.openRegistry(ctx, logger)
	if err != nil {
		return err
	}
	vs := versions[c.Table]
	if len(vs) == 0 {
		return fmt.Errorf("no table %q in %s (exporter tables lists them)", c.Table, st)
	}
	table := termSafe(c.Table, false)
	show := vs[len(vs)-1]
	if c.Version != 0 {
		found := false
		for _, v := range vs {
			if v.Version == c.Version {
				show, found = v, true
			}
		}
		if !found {
			return fmt.Errorf("table %s has no schema version %d (it has 1..%d)", c.Table, c.Version, vs[len(vs)-1].Version)
		}
	} else {
		fmt.Fprintf(stdout, "%s: %d schema versions\n", table, len(vs))
		for _, v := range vs {
			ddl := v.DDL
			if ddl == "" {
				ddl = "(first metadata)"
			}
			fmt.Fprintf(stdout, "  v%d  %d columns  opened at %q by %s\n", v.Version, len(v.Columns), v.OpenedAtPos, termSafe(ddl, false))
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "%s schema version %d:\n", table, show.Version)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  COLUMN\tARROW TYPE\tNULLABLE\tKEY\tTYPE FROM")
	keys := map[string]string{}
	for _, c := range show.Columns {
		keys[c.Name] = fmt.Sprintf("%v\t%s", c.Key, termSafe(c.TypeFrom, false))
	}
	for _, f := range show.Fields {
		extra, ok := keys[f.Name]
		if !ok {
			extra = "\t(metacolumn)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%v\t%s\n", termSafe(f.Name, false), termSafe(f.Type, false), f.Nullable, extra)
	}
	return tw.Flush()
}

type viewsCmd struct {
	sinkFlags    `embed:""`
	catalogFlags `embed:""`
	Dialect      string `help:"SQL dialect: duckdb or spark." default:"duckdb" enum:"duckdb,spark" env:"EXPORTER_VIEWS_DIALECT"`
	Root         string `help:"How the query engine reaches the sink (default: the sink's folder, or its s3:// URL)." env:"EXPORTER_VIEWS_ROOT"`
}

func (c *viewsCmd) run(ctx context.Context, stdout io.Writer, logger *slog.Logger) error {
	st, err := c.openLake(ctx, logger)
	if err != nil {
		return err
	}
	root := c.Root
	if root == "" {
		root = strings.TrimPrefix(st.String(), "file://")
	}
	sql, err := lakeview.Generate(ctx, st, root, c.Dialect)
	if err != nil {
		return err
	}
	if !c.catalogFlags.given() {
		kind, published, err := pipeline.PublishedCatalog(ctx, st)
		if err != nil {
			return err
		}
		if published {
			// The folder views stay right until maintenance rewrites a
			// partition; a reader should know before it happens.
			logger.Warn("this lake's tables are published to an Iceberg catalog: once `exporter maintain` compacts a partition, these folder views count its rows twice until the replaced files expire; give the --catalog flags for views over the tables", "catalog", kind)
			which := ""
			if kind != "" {
				which = " (--catalog " + kind + ")"
			}
			sql = "-- This lake's tables are published to an Iceberg catalog" + which + ". Once `exporter maintain`\n" +
				"-- compacts a partition, the folder views below count its rows twice until the replaced files expire\n" +
				"-- (--expire-after). Views over the tables: exporter views with the same --catalog flags.\n" + sql
		}
	}
	if c.catalogFlags.given() {
		more, err := c.icebergViews(ctx, st, logger)
		if err != nil {
			return err
		}
		sql += more
	}
	_, err = io.WriteString(stdout, sql)
	return err
}

// icebergViews is the SQL reading the lake's tables through the catalog.
func (c *viewsCmd) icebergViews(ctx context.Context, st sink, logger *slog.Logger) (string, error) {
	registry, err := lakeview.ReadRegistry(ctx, st)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(registry))
	for t := range registry {
		names = append(names, t)
	}
	sort.Strings(names)
	states, err := c.catalogFlags.states(ctx, st, names, logger)
	if err != nil {
		return "", err
	}
	cfg, err := c.catalogFlags.config(st, tables.ByDay)
	if err != nil {
		return "", err
	}
	return tables.CatalogViews(*cfg, states, c.Dialect)
}
