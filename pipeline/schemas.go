package pipeline

import (
	"encoding/json"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
)

// schemaDoc is the content of _schemas/{table}/v{N}.json: everything a
// reader needs to know about one schema version.
type schemaDoc struct {
	Table          string          `json:"table"`
	Version        int             `json:"schema_version"`
	Fields         []fieldDoc      `json:"arrow_schema"`
	Columns        []columnDoc     `json:"columns"`
	DDL            string          `json:"ddl,omitempty"`
	OpenedAtPos    string          `json:"opened_at_pos,omitempty"`
	OpenedAtOpTS   *time.Time      `json:"opened_at_op_ts,omitempty"`
	WrittenAt      time.Time       `json:"written_at"`
	Provisional    bool            `json:"provisional,omitempty"`
	StreamMetadata json.RawMessage `json:"stream_metadata,omitempty"`
	// Iceberg is the Iceberg schema the version's files were written in,
	// with a catalog (--catalog).
	Iceberg *icebergDoc `json:"iceberg,omitempty"`
}

type fieldDoc struct {
	Name     string            `json:"name"`
	Type     string            `json:"type"`
	Nullable bool              `json:"nullable"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// columnDoc is a column as the source described it, with the type chosen
// and its name in the data files (SourceName, when that differs from the
// source's: see arrowschema.Version.FieldName).
type columnDoc struct {
	Name       string `json:"name"`
	SourceName string `json:"source_name,omitempty"`
	SourceType string `json:"source_type"`
	Nullable   bool   `json:"nullable"`
	Key        bool   `json:"key"`
	Type       string `json:"type"`
	TypeFrom   string `json:"type_from"`
}

func describeVersion(v *arrowschema.Version, stream []byte, now time.Time) []byte {
	d := schemaDoc{Table: v.Table, Version: v.Number, DDL: v.DDL, OpenedAtPos: v.OpenedAtPos,
		WrittenAt: now.UTC(), Provisional: v.Provisional}
	if !v.OpenedAtTS.IsZero() {
		ts := v.OpenedAtTS.UTC()
		d.OpenedAtOpTS = &ts
	}
	if json.Valid(stream) {
		d.StreamMetadata = stream
	}
	for _, f := range v.Schema.Fields() {
		fd := fieldDoc{Name: f.Name, Type: f.Type.String(), Nullable: f.Nullable}
		if f.Metadata.Len() > 0 {
			fd.Metadata = map[string]string{}
			for i, k := range f.Metadata.Keys() {
				fd.Metadata[k] = f.Metadata.Values()[i]
			}
		}
		d.Fields = append(d.Fields, fd)
	}
	for i, c := range v.Columns {
		cd := columnDoc{Name: v.FieldName(i), SourceType: c.SourceType, Nullable: c.Nullable, Key: c.Key,
			Type: c.Type.String(), TypeFrom: c.TypeFrom}
		if cd.Name != c.Name {
			cd.SourceName = c.Name
		}
		d.Columns = append(d.Columns, cd)
	}
	out, _ := json.MarshalIndent(d, "", "  ")
	return append(out, '\n')
}
