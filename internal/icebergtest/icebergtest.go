// Package icebergtest reads the Iceberg tables the exporter publishes,
// for tests.
package icebergtest

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// Scan loads the table of the source table name through p's catalog and
// counts its rows with iceberg-go's scan of the current snapshot, which
// reads every data file the snapshot names.
func Scan(t testing.TB, p *tables.Publisher, name string) (*table.Table, int64) {
	t.Helper()
	ctx := context.Background()
	ident, err := p.Identifier(name)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := p.Catalog().LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load the Iceberg table of %s: %v", name, err)
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("scan the Iceberg table of %s: %v", name, err)
	}
	defer at.Release()
	return tbl, at.NumRows()
}
