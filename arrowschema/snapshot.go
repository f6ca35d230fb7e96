package arrowschema

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// Snapshot is a catalog's state in a form that survives a restart: what a
// checkpoint stores so that replay after a crash rebuilds the very same
// schema versions.
type Snapshot struct {
	Schemas []SnapshotSchema `json:"schemas,omitempty"` // JSON Schema records, oldest first
	Tables  []SnapshotTable  `json:"tables,omitempty"`
}

// SnapshotSchema is one cached JSON Schema record.
type SnapshotSchema struct {
	ID  string          `json:"id"`
	Doc json.RawMessage `json:"doc"`
}

// SnapshotTable is one table's state.
type SnapshotTable struct {
	Table       string            `json:"table"`
	Metadata    cdc.TableMetadata `json:"metadata"`
	Version     int               `json:"version,omitempty"`
	DDL         string            `json:"ddl,omitempty"`
	OpenedAtPos string            `json:"opened_at_pos,omitempty"`
	OpenedAtTS  time.Time         `json:"opened_at_ts,omitzero"`
	Provisional bool              `json:"provisional,omitempty"`
	Hold        bool              `json:"hold,omitempty"`
	Written     bool              `json:"written,omitempty"`
	DDLTypes    map[string]string `json:"ddl_types,omitempty"`
	OpeningDDL  string            `json:"opening_ddl,omitempty"`
	// Columns are a provisional version's columns as built: a schema
	// record that came after the DDL does not retype it (the refresh
	// will), so rebuilding it with every cached record, as for the
	// others, could give it other types than its files have.
	Columns []SnapshotColumn `json:"columns,omitempty"`
}

// SnapshotColumn is a column's lake type, where it came from, and its
// nullability.
type SnapshotColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	TypeFrom string `json:"type_from,omitempty"`
	Nullable bool   `json:"nullable,omitempty"`
}

// Snapshot captures the catalog's state.
func (c *Catalog) Snapshot() Snapshot {
	var s Snapshot
	for _, id := range c.order {
		s.Schemas = append(s.Schemas, SnapshotSchema{ID: id, Doc: c.schemas[id].Raw})
	}
	for name, st := range c.tables {
		t := SnapshotTable{Table: name, DDLTypes: st.ddlTypes, OpeningDDL: st.openingDDL}
		if v := st.current; v != nil {
			t.Metadata, t.Version, t.DDL, t.OpenedAtPos, t.OpenedAtTS = v.Metadata, v.Number, v.DDL, v.OpenedAtPos, v.OpenedAtTS
			t.Provisional, t.Hold, t.Written = v.Provisional, v.Hold, v.written
			if v.Provisional {
				for _, col := range v.Columns {
					t.Columns = append(t.Columns, SnapshotColumn{Name: col.Name, Type: col.Type.String(), TypeFrom: col.TypeFrom, Nullable: col.Nullable})
				}
			}
		}
		s.Tables = append(s.Tables, t)
	}
	sort.Slice(s.Tables, func(i, j int) bool { return s.Tables[i].Table < s.Tables[j].Table })
	return s
}

// RestoreCatalog builds a catalog from a snapshot. Versions are rebuilt
// from their metadata with the same options, so a restored catalog
// describes the same files as the one that was saved.
func RestoreCatalog(opts Options, s Snapshot) (*Catalog, error) {
	c := NewCatalog(opts)
	c.restoring = true
	defer func() { c.restoring = false }()
	for _, sc := range s.Schemas {
		if _, err := c.ApplySchemaRecord(sc.ID, sc.Doc); err != nil {
			return nil, fmt.Errorf("restore schema record %q: %w", sc.ID, err)
		}
	}
	for _, t := range s.Tables {
		st := &tableState{ddlTypes: map[string]string{}, openingDDL: t.OpeningDDL}
		for k, v := range t.DDLTypes {
			st.ddlTypes[k] = v
		}
		c.tables[t.Table] = st
		if t.Version == 0 {
			continue
		}
		v, err := c.build(t.Metadata, st)
		if err != nil {
			return nil, fmt.Errorf("restore table %s: %w", t.Table, err)
		}
		v.Number, v.DDL, v.OpenedAtPos, v.OpenedAtTS, v.Provisional, v.Hold, v.written = t.Version, t.DDL, t.OpenedAtPos, t.OpenedAtTS, t.Provisional, t.Hold, t.Written
		if err := c.restoreColumns(v, t.Columns); err != nil {
			return nil, fmt.Errorf("restore table %s: %w", t.Table, err)
		}
		st.current = v
	}
	return c, nil
}

// restoreColumns gives v the types, their origins and the nullability a
// snapshot kept for its columns (none: v stays as built).
func (c *Catalog) restoreColumns(v *Version, cols []SnapshotColumn) error {
	if len(cols) == 0 {
		return nil
	}
	if len(cols) != len(v.Columns) {
		return fmt.Errorf("the snapshot has %d columns for version %d, its metadata %d", len(cols), v.Number, len(v.Columns))
	}
	for i, sc := range cols {
		typ, err := ParseType(sc.Type)
		if err != nil || sc.Name != v.Columns[i].Name {
			return fmt.Errorf("column %d of version %d: %q %q in the snapshot, %q in its metadata: %v", i+1, v.Number, sc.Name, sc.Type, v.Columns[i].Name, err)
		}
		v.Columns[i].Type, v.Columns[i].TypeFrom, v.Columns[i].Nullable = typ, sc.TypeFrom, sc.Nullable
	}
	v.Schema = c.arrowSchema(v)
	return nil
}
