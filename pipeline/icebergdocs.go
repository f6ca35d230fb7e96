package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// icebergDoc is the part of a _schemas document that says which Iceberg
// schema a version's files were written in.
type icebergDoc struct {
	// Table is the Iceberg table's identifier, its levels joined by ".".
	Table    string `json:"table"`
	SchemaID int    `json:"schema_id"`
	// FieldIDs are the field IDs of the version's columns, nested ones
	// named by their path (before_image.ID, absent_columns.element).
	FieldIDs []icebergFieldID `json:"field_ids"`
}

type icebergFieldID struct {
	Name string `json:"name"`
	ID   int    `json:"id"`
}

// preparedVersion is a table version whose Iceberg schema is known.
type preparedVersion struct {
	table    string
	version  int
	prepared tables.Prepared
}

// prepared records the Iceberg schema of a version, for its _schemas
// document.
func (t *icebergTables) prepared(table string, version int, p tables.Prepared) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := versionKey{table, version}
	if !t.seen[key] {
		t.seen[key] = true
		t.undocumented = append(t.undocumented, preparedVersion{table, version, p})
	}
}

// versionKey names a table version.
type versionKey struct {
	table   string
	version int
}

// takeUndocumented returns the versions prepared since the last call.
func (t *icebergTables) takeUndocumented() []preparedVersion {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.undocumented
	t.undocumented = nil
	return out
}

// giveBack returns versions whose document could not be completed yet.
func (t *icebergTables) giveBack(pvs []preparedVersion) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.undocumented = append(t.undocumented, pvs...)
}

// documentIceberg adds the Iceberg schema id and field IDs to the
// _schemas document of every version prepared since the last commit: the
// document waiting in docs, or the one an earlier commit wrote, which is
// read back and written again.
func (t *icebergTables) documentIceberg(ctx context.Context, docs map[string][]byte) error {
	var later []preparedVersion
	defer func() { t.giveBack(later) }()
	for _, pv := range t.takeUndocumented() {
		seg, err := partition.TableSegment(pv.table)
		if err != nil {
			continue // no folder, no document
		}
		key := partition.SchemaKey(seg, pv.version)
		data, pending := docs[key]
		if !pending {
			data, err = t.store.Get(ctx, key)
			if errors.Is(err, store.ErrNotExist) {
				later = append(later, pv) // described at a later commit
				continue
			}
			if err != nil {
				return fmt.Errorf("read %s to add its Iceberg schema: %w", key, err)
			}
		}
		var d schemaDoc
		if err := json.Unmarshal(data, &d); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		d.Iceberg = describeIceberg(pv.prepared)
		out, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		docs[key] = append(out, '\n')
	}
	return keepIceberg(ctx, t.store, docs)
}

// keepIceberg gives a waiting document without an Iceberg section the
// one its earlier copy in the store has: a run that exports the same
// versions again describes them again, and may write no file of them
// (nothing new), so it never prepares them; a version's Iceberg schema
// never changes once given.
func keepIceberg(ctx context.Context, st Store, docs map[string][]byte) error {
	for key, data := range docs {
		var d schemaDoc
		if err := json.Unmarshal(data, &d); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if d.Iceberg != nil {
			continue
		}
		old, err := st.Get(ctx, key)
		if errors.Is(err, store.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s to keep its Iceberg schema: %w", key, err)
		}
		var prev schemaDoc
		if json.Unmarshal(old, &prev) != nil || prev.Iceberg == nil {
			continue // written without a catalog, or not ours to fix
		}
		d.Iceberg = prev.Iceberg
		out, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		docs[key] = append(out, '\n')
	}
	return nil
}

// describeIceberg lists a prepared version's field IDs, depth first.
func describeIceberg(p tables.Prepared) *icebergDoc {
	d := &icebergDoc{Table: strings.Join(p.Identifier, "."), SchemaID: p.SchemaID}
	var walk func(prefix string, f arrow.Field)
	walk = func(prefix string, f arrow.Field) {
		name := prefix + f.Name
		if v, ok := f.Metadata.GetValue(table.ArrowParquetFieldIDKey); ok {
			if id, err := strconv.Atoi(v); err == nil {
				d.FieldIDs = append(d.FieldIDs, icebergFieldID{Name: name, ID: id})
			}
		}
		switch dt := f.Type.(type) {
		case *arrow.StructType:
			for _, c := range dt.Fields() {
				walk(name+".", c)
			}
		case *arrow.ListType:
			// Iceberg's names of nested parts, which its schemas find
			// by path: element, key, value.
			elem := dt.ElemField()
			elem.Name = "element"
			walk(name+".", elem)
		case *arrow.MapType:
			key, item := dt.KeyField(), dt.ItemField()
			key.Name, item.Name = "key", "value"
			walk(name+".", key)
			walk(name+".", item)
		}
	}
	for _, f := range p.Schema.Fields() {
		walk("", f)
	}
	return d
}
