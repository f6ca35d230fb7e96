package pipeline_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/lakehouse-exporter/lakehouse-exporter/pipeline"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// schemaDocIceberg is what a test reads of a _schemas document.
type schemaDocIceberg struct {
	Version int `json:"schema_version"`
	Fields  []struct {
		Name string `json:"name"`
	} `json:"arrow_schema"`
	Iceberg *struct {
		Table    string `json:"table"`
		SchemaID int    `json:"schema_id"`
		FieldIDs []struct {
			Name string `json:"name"`
			ID   int    `json:"id"`
		} `json:"field_ids"`
	} `json:"iceberg"`
}

// TestSchemaDocumentsNameTheIcebergSchema: with a catalog, each
// version's _schemas document names the Iceberg schema its files were
// written in (the one the table's properties map the version to) and the
// field ID of every column (that schema's), also after the same input is
// exported again.
func TestSchemaDocumentsNameTheIcebergSchema(t *testing.T) {
	dir := t.TempDir()
	lake := filepath.Join(dir, "lake")
	cfg := tables.Config{Kind: tables.SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(lake, "_iceberg")}
	for run := 1; run <= 2; run++ {
		if _, err := export(t, lake, func(c *pipeline.Config) { c.Catalog = &cfg }, samplePath); err != nil {
			t.Fatal(err)
		}
		pub, err := tables.Open(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"SALES.ORDERS", "HR.EMPLOYEES"} {
			ident, _ := pub.Identifier(name)
			tbl, err := pub.Catalog().LoadTable(context.Background(), ident)
			if err != nil {
				t.Fatal(err)
			}
			for version := 1; version <= 2; version++ {
				data, err := os.ReadFile(filepath.Join(lake, "_schemas", name, "v"+strconv.Itoa(version)+".json"))
				if err != nil {
					t.Fatal(err)
				}
				var doc schemaDocIceberg
				if err := json.Unmarshal(data, &doc); err != nil {
					t.Fatal(err)
				}
				where := name + " v" + strconv.Itoa(version) + " run " + strconv.Itoa(run)
				if doc.Iceberg == nil {
					t.Fatalf("%s: no iceberg section:\n%s", where, data)
				}
				wantID, err := strconv.Atoi(tbl.Properties()["lakehouse-exporter.schema-version."+strconv.Itoa(version)])
				if err != nil {
					t.Fatalf("%s: the table maps the version to no schema: %v", where, tbl.Properties())
				}
				if doc.Iceberg.SchemaID != wantID || doc.Iceberg.Table != strings.Join(ident, ".") {
					t.Errorf("%s: iceberg %s schema %d, want %s schema %d", where, doc.Iceberg.Table, doc.Iceberg.SchemaID, strings.Join(ident, "."), wantID)
				}
				sc := tbl.Schemas()[wantID]
				ids := map[string]int{}
				for _, f := range doc.Iceberg.FieldIDs {
					ids[f.Name] = f.ID
				}
				for _, f := range doc.Fields {
					want, ok := sc.FindFieldByName(f.Name)
					if !ok {
						t.Errorf("%s: Iceberg schema %d has no column %s", where, wantID, f.Name)
						continue
					}
					if ids[f.Name] != want.ID {
						t.Errorf("%s: column %s has field ID %d in the document, %d in the table", where, f.Name, ids[f.Name], want.ID)
					}
				}
				checkNested(t, where, sc, ids)
			}
		}
		pub.Close()
	}
}

// checkNested: every nested column the document names has the field ID
// of the schema's field of that path.
func checkNested(t *testing.T, where string, sc *iceberg.Schema, ids map[string]int) {
	t.Helper()
	nested := 0
	for name, id := range ids {
		if !strings.Contains(name, ".") {
			continue
		}
		nested++
		f, ok := sc.FindFieldByName(name)
		if !ok || f.ID != id {
			t.Errorf("%s: nested %s has field ID %d in the document; the schema has %v (found %v)", where, name, id, f.ID, ok)
		}
	}
	if nested == 0 {
		t.Errorf("%s: no nested column (before_image, absent_columns) in the field IDs: %v", where, ids)
	}
}
