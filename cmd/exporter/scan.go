package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// scanCmd reads a table through the Iceberg catalog: what an engine
// reading the table sees, with nothing but the exporter.
type scanCmd struct {
	sinkFlags    `embed:""`
	catalogFlags `embed:""`
	Table        string   `arg:"" help:"Qualified source table name, e.g. SALES.ORDERS."`
	Columns      []string `help:"Columns to show, comma-separated (default: all)." env:"EXPORTER_SCAN_COLUMNS"`
	Limit        int64    `help:"Most rows to show; 0 shows all." default:"20" env:"EXPORTER_SCAN_LIMIT"`
}

func (c *scanCmd) run(ctx context.Context, stdout io.Writer, logger *slog.Logger) error {
	if c.Catalog == "" {
		return errors.New("scan reads through the Iceberg catalog: give --catalog (and the other --catalog flags run was given)")
	}
	st, err := c.openLake(ctx, logger)
	if err != nil {
		return err
	}
	cfg, err := c.catalogFlags.readConfig(ctx, st)
	if err != nil {
		return err
	}
	pub, err := tables.Open(ctx, *cfg, logger)
	if err != nil {
		return fmt.Errorf("open the Iceberg catalog: %w", err)
	}
	defer pub.Close()
	tbl, err := pub.Read(ctx, c.Table, c.Columns, c.Limit)
	if err != nil {
		return err
	}
	defer tbl.Release()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	names := make([]string, 0, tbl.NumCols())
	for _, f := range tbl.Schema().Fields() {
		names = append(names, termSafe(f.Name, false))
	}
	fmt.Fprintln(tw, strings.Join(names, "\t"))
	rdr := array.NewTableReader(tbl, 0)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := range int(rec.NumRows()) {
			row := make([]string, rec.NumCols())
			for j, col := range rec.Columns() {
				row[j] = termSafe(col.ValueStr(i), false)
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
	if err := rdr.Err(); err != nil {
		return err
	}
	return tw.Flush()
}
