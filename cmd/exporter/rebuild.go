package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/maintain"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

type checkpointCmd struct {
	Rebuild checkpointRebuildCmd `cmd:"" help:"Rebuild a partition's corrupt or lost checkpoint from the files the lake holds, so that the next run resumes after them instead of writing every row again."`
}

type checkpointRebuildCmd struct {
	sinkFlags `embed:""`
	Partition string `help:"The source partition whose checkpoint to rebuild, as the error names it (_checkpoints/partitions/NAME.json): a Kafka topic-partition (orders-0), or an input file's partition (its name and a hash of its path, as in sample_jsonl-e3fc96aa)." required:"" env:"-"`
	Force     bool   `help:"Rebuild even when the checkpoint is readable or the partition has pending intents. Only once no instance exports the partition: a running one would be fenced, and its uncommitted files deleted." env:"-"`
}

// rebuildLake is what a rebuild reads of the lake: the files of one
// source partition, and which tables and versions have data files at all.
type rebuildLake struct {
	st        sink
	partition string
	// dataSegs is every table folder, and dataVersions every table folder
	// and version, that holds a data file (of any partition).
	dataSegs     map[string]bool
	dataVersions map[string]bool // seg + "/" + version
}

func (c *checkpointRebuildCmd) run(ctx context.Context, stdout io.Writer, logger *slog.Logger) error {
	st, err := c.openLake(ctx, logger)
	if err != nil {
		return err
	}
	lake := &rebuildLake{st: st, partition: c.Partition}
	res, err := commit.Rebuild(ctx, commit.RebuildConfig{Store: st, Partition: c.Partition, Force: c.Force,
		Files: lake.files, Schema: lake.schema, Logger: logger})
	if err != nil {
		return err
	}
	w := func(format string, args ...any) { fmt.Fprintf(stdout, format, args...) }
	switch {
	case !res.Existed:
		w("checkpoint %s was missing\n", checkpoint.Key(c.Partition))
	case res.Corrupt != nil:
		w("checkpoint %s was corrupt: %s\n", checkpoint.Key(c.Partition), termSafe(res.Corrupt.Error(), false))
	default:
		w("checkpoint %s replaced (offset %d before)\n", checkpoint.Key(c.Partition), res.Before.Offset)
	}
	w("rebuilt at offset %d from %d files", res.After.Offset, res.Files)
	if res.Intents > 0 {
		w("; %d pending intents settled: %d files adopted, %d deleted (read again), %d never uploaded", res.Intents, res.Adopted, res.Deleted, res.Forgotten)
	}
	w("\n")
	var snap arrowschema.Snapshot
	json.Unmarshal(res.After.Catalog, &snap)
	w("schema catalog: %d tables (used by Kafka partitions); released versions: %d (used by file sources)\n", len(snap.Tables), len(res.After.WrittenVersions))
	w("the next run resumes after offset %d; records past it are read again\n", res.After.Offset)
	return nil
}

// files lists the data and dead-letter files of the partition, with the
// offsets their metadata names.
func (l *rebuildLake) files(ctx context.Context) ([]commit.FileRange, error) {
	keys, err := l.st.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list the lake: %w", err)
	}
	l.dataSegs, l.dataVersions = map[string]bool{}, map[string]bool{}
	var out []commit.FileRange
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "_dlq/") && strings.HasSuffix(k, ".jsonl"):
			if !namesPartition(path.Base(k), "", l.partition, ".jsonl") {
				continue
			}
			f, ok, err := l.deadLetterRange(ctx, k)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, f)
			}
		case strings.HasSuffix(k, ".parquet") && !strings.HasPrefix(k, "_"):
			parts := strings.Split(k, "/")
			if len(parts) < 3 || !strings.HasPrefix(parts[1], "schema_version=") {
				continue
			}
			l.dataSegs[parts[0]] = true
			l.dataVersions[parts[0]+"/"+strings.TrimPrefix(parts[1], "schema_version=")] = true
			name := parts[len(parts)-1]
			compacted := strings.HasPrefix(name, maintain.CompactedPrefix)
			if !compacted && !namesPartition(name, "part-", l.partition, ".parquet") {
				continue
			}
			f, ok, err := l.dataRange(ctx, k)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// namesPartition reports whether a file name is prefix, the partition, a
// 20-digit first offset, and optionally a run id, then ext: the names
// partition.DataFileName and DLQKey give. A partition whose name extends
// another's ("orders-1" and "orders-1-2") is told apart by the digits.
func namesPartition(name, prefix, partitionName, ext string) bool {
	rest, ok := strings.CutPrefix(name, prefix+partitionName+"-")
	if !ok || !strings.HasSuffix(rest, ext) {
		return false
	}
	rest = strings.TrimSuffix(rest, ext)
	digits, _, _ := strings.Cut(rest, "-")
	if len(digits) != 20 {
		return false
	}
	_, err := strconv.ParseUint(digits, 10, 64)
	return err == nil
}

// dataRange reads a data file's source range from its key/value metadata.
func (l *rebuildLake) dataRange(ctx context.Context, key string) (commit.FileRange, bool, error) {
	data, err := l.st.Get(ctx, key)
	if err != nil {
		return commit.FileRange{}, false, fmt.Errorf("read %s: %w", key, err)
	}
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return commit.FileRange{}, false, fmt.Errorf("%s is not a Parquet file (%w): move it out of the lake, then rebuild again", key, err)
	}
	defer r.Close()
	kv := r.MetaData().KeyValueMetadata()
	if ranges, ok, err := maintain.SourceRanges(kv); ok {
		// A compacted file: the rows of several files, of any partitions.
		rg, mine := ranges[l.partition]
		v, verr := strconv.Atoi(valueOf(kv.FindValue("lakehouse.schema_version")))
		f := commit.FileRange{Key: key, Table: valueOf(kv.FindValue("lakehouse.table")), Version: v, FirstOffset: rg.First, LastOffset: rg.Last}
		if err := errors.Join(err, verr); err != nil || f.Table == "" {
			return commit.FileRange{}, false, fmt.Errorf("%s, a compacted file, has unreadable metadata (%v): move it out of the lake, then rebuild again", key, err)
		}
		return f, mine, nil
	}
	if valueOf(kv.FindValue("lakehouse.source_partition")) != l.partition {
		return commit.FileRange{}, false, nil
	}
	f := commit.FileRange{Key: key, Table: valueOf(kv.FindValue("lakehouse.table"))}
	var errs []error
	for _, p := range []struct {
		key string
		to  *int64
	}{{"lakehouse.first_offset", &f.FirstOffset}, {"lakehouse.last_offset", &f.LastOffset}} {
		n, err := strconv.ParseInt(valueOf(kv.FindValue(p.key)), 10, 64)
		*p.to = n
		errs = append(errs, err)
	}
	v, err := strconv.Atoi(valueOf(kv.FindValue("lakehouse.schema_version")))
	f.Version = v
	if err := errors.Join(append(errs, err)...); err != nil || f.Table == "" {
		return commit.FileRange{}, false, fmt.Errorf("%s lacks the exporter's source range in its metadata (%v): it was not written by the exporter; move it out of the lake, then rebuild again", key, err)
	}
	return f, true, nil
}

// deadLetterRange reads the offsets a dead-letter file's entries name.
func (l *rebuildLake) deadLetterRange(ctx context.Context, key string) (commit.FileRange, bool, error) {
	data, err := l.st.Get(ctx, key)
	if err != nil {
		return commit.FileRange{}, false, fmt.Errorf("read %s: %w", key, err)
	}
	f := commit.FileRange{Key: key, FirstOffset: -1, LastOffset: -1}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		var e struct {
			Partition string `json:"partition"`
			Offset    *int64 `json:"offset"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Offset == nil {
			return commit.FileRange{}, false, fmt.Errorf("%s line %d is not a dead letter (%v): move the file out of the lake, then rebuild again", key, n, err)
		}
		if e.Partition != l.partition {
			continue
		}
		if f.FirstOffset < 0 || *e.Offset < f.FirstOffset {
			f.FirstOffset = *e.Offset
		}
		f.LastOffset = max(f.LastOffset, *e.Offset)
	}
	return f, f.LastOffset >= 0, sc.Err()
}

// schemaVersionDoc is what a rebuild reads of a _schemas/ document (the
// pipeline writes it).
type schemaVersionDoc struct {
	Table        string     `json:"table"`
	Version      int        `json:"schema_version"`
	DDL          string     `json:"ddl"`
	OpenedAtPos  string     `json:"opened_at_pos"`
	OpenedAtOpTS *time.Time `json:"opened_at_op_ts"`
	Provisional  bool       `json:"provisional"`
	Columns      []struct {
		Name       string `json:"name"`
		SourceName string `json:"source_name"`
		SourceType string `json:"source_type"`
		Nullable   bool   `json:"nullable"`
		Key        bool   `json:"key"`
		Type       string `json:"type"`
		TypeFrom   string `json:"type_from"`
	} `json:"columns"`
}

// schema rebuilds what the checkpoint carries besides its offset. Both
// parts are written: a Kafka partition restores the catalog and ignores
// the marks, a file source the reverse.
//
// The catalog holds, for every table with data files of this partition
// and every table with none at all, its newest version as _schemas/
// describes it (the documents are written at each commit, so the newest
// is the version in force at the last checkpoint), with the types its
// files have, and the types of the DDL statements that opened its
// versions. The JSON Schema records the stream sent are not in the lake
// and are not rebuilt.
//
// The marks are every version that _schemas/ still describes as
// provisional and that has data files (its DML was released before its
// refresh came), and the marks of every other readable checkpoint.
func (l *rebuildLake) schema(ctx context.Context, kept []commit.FileRange) (json.RawMessage, []checkpoint.VersionMark, error) {
	docs, err := l.readDocs(ctx)
	if err != nil {
		return nil, nil, err
	}
	ours := map[string]bool{}
	for _, f := range kept {
		if f.Table != "" {
			ours[f.Table] = true
		}
	}
	var snap arrowschema.Snapshot
	marks := map[checkpoint.VersionMark]bool{}
	for _, seg := range slices.Sorted(maps.Keys(docs)) {
		vs := docs[seg]
		newest := vs[len(vs)-1]
		for _, d := range vs {
			if d.Provisional && l.dataVersions[seg+"/"+strconv.Itoa(d.Version)] {
				marks[checkpoint.VersionMark{Table: d.Table, Version: d.Version, OpenedAtPos: d.OpenedAtPos}] = true
			}
		}
		if !ours[newest.Table] && l.dataSegs[seg] {
			continue // another partition's table
		}
		snap.Tables = append(snap.Tables, snapshotTable(vs, l.dataVersions[seg+"/"+strconv.Itoa(newest.Version)]))
	}
	if _, err := arrowschema.RestoreCatalog(arrowschema.Options{}, snap); err != nil {
		return nil, nil, fmt.Errorf("the schema catalog rebuilt from _schemas/ does not restore: %w", err)
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		return nil, nil, err
	}
	if err := l.otherMarks(ctx, marks); err != nil {
		return nil, nil, err
	}
	out := slices.Collect(maps.Keys(marks))
	slices.SortFunc(out, func(a, b checkpoint.VersionMark) int {
		if n := strings.Compare(a.Table, b.Table); n != 0 {
			return n
		}
		return a.Version - b.Version
	})
	return raw, out, nil
}

// readDocs reads every _schemas/ document, by table folder, versions
// ascending.
func (l *rebuildLake) readDocs(ctx context.Context) (map[string][]schemaVersionDoc, error) {
	keys, err := l.st.List(ctx, "_schemas/")
	if err != nil {
		return nil, fmt.Errorf("list _schemas/: %w", err)
	}
	out := map[string][]schemaVersionDoc{}
	for _, k := range keys {
		parts := strings.Split(k, "/")
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "v") || !strings.HasSuffix(parts[2], ".json") {
			continue
		}
		data, err := l.st.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k, err)
		}
		var d schemaVersionDoc
		if err := json.Unmarshal(data, &d); err != nil || d.Table == "" || k != partition.SchemaKey(parts[1], d.Version) {
			return nil, fmt.Errorf("%s is not a schema document of its folder (%v)", k, err)
		}
		out[parts[1]] = append(out[parts[1]], d)
	}
	for _, vs := range out {
		slices.SortFunc(vs, func(a, b schemaVersionDoc) int { return a.Version - b.Version })
	}
	return out, nil
}

// snapshotTable is a table's catalog state rebuilt from its documents,
// versions ascending; written tells whether the newest has data files.
func snapshotTable(vs []schemaVersionDoc, written bool) arrowschema.SnapshotTable {
	d := vs[len(vs)-1]
	t := arrowschema.SnapshotTable{Table: d.Table, Version: d.Version, DDL: d.DDL, OpenedAtPos: d.OpenedAtPos,
		Provisional: d.Provisional, Written: d.Provisional && written, DDLTypes: ddlTypes(vs)}
	if d.OpenedAtOpTS != nil {
		t.OpenedAtTS = *d.OpenedAtOpTS
	}
	t.Metadata.Table = d.Table
	for _, c := range d.Columns {
		name := c.Name
		if c.SourceName != "" {
			name = c.SourceName
		}
		t.Metadata.Columns = append(t.Metadata.Columns, cdc.Column{Name: name, Type: c.SourceType, Nullable: c.Nullable, Key: c.Key})
		t.Columns = append(t.Columns, arrowschema.SnapshotColumn{Name: name, Type: c.Type, TypeFrom: c.TypeFrom, Nullable: c.Nullable})
	}
	return t
}

// ddlTypes replays the SQL types the DDL statements that opened a table's
// versions declared, as the catalog records them for the metadata that
// follows.
func ddlTypes(vs []schemaVersionDoc) map[string]string {
	types := map[string]string{}
	for _, d := range vs {
		parsed := arrowschema.ParseDDL(d.DDL)
		for _, col := range parsed.Create {
			types[col.Name] = col.SQLType
		}
		for _, a := range parsed.Alters {
			switch a.Kind {
			case arrowschema.AlterAdd, arrowschema.AlterModify:
				if a.Column.SQLType != "" {
					types[a.Column.Name] = a.Column.SQLType
				}
			case arrowschema.AlterDrop:
				delete(types, a.Column.Name)
			case arrowschema.AlterRename:
				if t, ok := types[a.Column.Name]; ok {
					types[a.NewName] = t
					delete(types, a.Column.Name)
				}
			}
		}
	}
	if len(types) == 0 {
		return nil
	}
	return types
}

// otherMarks adds the marks of every other readable checkpoint: a file
// source's checkpoints each hold them all.
func (l *rebuildLake) otherMarks(ctx context.Context, marks map[checkpoint.VersionMark]bool) error {
	keys, err := l.st.List(ctx, "_checkpoints/partitions/")
	if err != nil {
		return fmt.Errorf("list checkpoints: %w", err)
	}
	for _, k := range keys {
		if k == checkpoint.Key(l.partition) {
			continue
		}
		data, err := l.st.Get(ctx, k)
		if errors.Is(err, store.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", k, err)
		}
		c, err := checkpoint.Decode(data)
		if err != nil {
			continue // corrupt too: it has no marks to give
		}
		for _, m := range c.WrittenVersions {
			marks[m] = true
		}
	}
	return nil
}
