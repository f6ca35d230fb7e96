package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// icebergTables publishes each commit round's data files to Iceberg
// tables (commit.Publisher). The writer asks it for a version's file
// schema before the version's first file (fileSchema), which creates or
// evolves the table, so that every file carries the table's field IDs;
// the uploader hands it each file's footer (noteFile) from the encoded
// bytes in memory, whose statistics become the data file's metrics.
type icebergTables struct {
	pub   *tables.Publisher
	store Store
	run   string
	base  string // the sink's URI, before every file's key
	ctx   context.Context
	log   *slog.Logger

	mu    sync.Mutex
	files map[string]tables.DataFile // by key, until published (noteFile)
	// seen holds every version prepared in this run; undocumented are
	// those whose _schemas document does not name its Iceberg schema yet
	// (see documentIceberg).
	seen         map[versionKey]bool
	undocumented []preparedVersion
	// unprepared holds the versions this run opened that have no Iceberg
	// schema yet (noteVersion): a table's schema evolves only when a
	// version writes a file, and it evolves through each version opened
	// since, in order, so that every rename, drop and add applies as the
	// source made it, one step at a time (A → B, then ADD A: the new A is
	// a new column, not the old one back).
	unprepared map[versionKey]*arrowschema.Version
	// ahead holds the versions being prepared ahead of their first file
	// (prepareAhead), by the writer's version.
	ahead aheadPreparations
}

// The commit protocol's recovery and fencing call the tables too.
var (
	_ commit.RecoveringPublisher  = (*icebergTables)(nil)
	_ commit.WithdrawingPublisher = (*icebergTables)(nil)
)

func newIcebergTables(ctx context.Context, pub *tables.Publisher, st Store, run string, log *slog.Logger) *icebergTables {
	return &icebergTables{pub: pub, store: st, run: run, base: st.String(), ctx: ctx, log: log, files: map[string]tables.DataFile{},
		seen: map[versionKey]bool{}, unprepared: map[versionKey]*arrowschema.Version{}, ahead: newAheadPreparations(ctx)}
}

// fileSchema is writer.Config.FileSchema: the version's schema with the
// Iceberg field IDs of its table. A preparation started ahead for v
// (prepareAhead) gives its result; one that failed is tried again here,
// so that the flush reports the failure as it always has.
func (t *icebergTables) fileSchema(v *arrowschema.Version) (*arrow.Schema, error) {
	if sc, err, ok := t.ahead.take(v); ok && err == nil {
		return sc, nil
	}
	return t.fileSchemaInOrder(t.ctx, v)
}

// fileSchemaInOrder prepares v's table, one preparation of a table at a
// time: each prepares the table's earlier versions first.
func (t *icebergTables) fileSchemaInOrder(ctx context.Context, v *arrowschema.Version) (*arrow.Schema, error) {
	unlock := t.ahead.lockTable(v.Table)
	defer unlock()
	return t.fileSchemaNow(ctx, v)
}

// fileSchemaNow gives version v, and every version of its table opened
// before it that has none yet, its Iceberg schema.
//
// Every column of the table is optional, whatever the source declares: a
// partial image leaves NOT NULL columns null in some files (the writer
// then writes them OPTIONAL), and a reader trusting a required column
// fails on them (Spark: a NullPointerException). The files keep the
// writer's own choice.
func (t *icebergTables) fileSchemaNow(ctx context.Context, v *arrowschema.Version) (*arrow.Schema, error) {
	for _, before := range t.unpreparedBefore(v) {
		if _, err := t.prepare(ctx, before); err != nil && !errors.Is(err, tables.ErrVersionSuperseded) {
			return nil, fmt.Errorf("prepare the Iceberg table for version %d, opened before version %d: %w", before.Number, v.Number, err)
		}
	}
	p, err := t.prepare(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("prepare the Iceberg table: %w", err)
	}
	md := v.Schema.Metadata()
	out := p.Schema.Fields()
	for i, f := range v.Schema.Fields() {
		out[i] = sameNullability(out[i], f)
	}
	return arrow.NewSchema(out, &md), nil
}

// prepare gives version v its Iceberg schema (tables.PrepareVersion).
func (t *icebergTables) prepare(ctx context.Context, v *arrowschema.Version) (tables.Prepared, error) {
	fields := v.Schema.Fields()
	for i := range fields {
		fields[i] = optional(fields[i])
	}
	md := v.Schema.Metadata()
	p, err := t.pub.PrepareVersion(ctx, tables.TableVersion{Table: v.Table, Version: v.Number, Schema: arrow.NewSchema(fields, &md),
		Renames: ddlRenames(v)})
	if err == nil || errors.Is(err, tables.ErrVersionSuperseded) {
		// Kept after any other failure: the next version that writes
		// tries it again.
		t.mu.Lock()
		delete(t.unprepared, versionKey{v.Table, v.Number})
		t.mu.Unlock()
	}
	if err != nil {
		return tables.Prepared{}, err
	}
	t.prepared(v.Table, v.Number, p)
	return p, nil
}

// noteVersion keeps a version opened (or completed) in this run until it
// has an Iceberg schema.
func (t *icebergTables) noteVersion(v *arrowschema.Version) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if key := (versionKey{v.Table, v.Number}); !t.seen[key] {
		t.unprepared[key] = v
	}
}

// unpreparedBefore lists the versions of v's table before v that were
// noted and have no Iceberg schema, oldest first.
func (t *icebergTables) unpreparedBefore(v *arrowschema.Version) []*arrowschema.Version {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*arrowschema.Version
	for k, u := range t.unprepared {
		if k.table == v.Table && k.version < v.Number {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *arrowschema.Version) int { return a.Number - b.Number })
	return out
}

// ddlRenames are the columns the DDL statement that opened v renamed
// (RENAME COLUMN), by their names in v's data files: new name → old.
func ddlRenames(v *arrowschema.Version) map[string]string {
	if v.DDL == "" {
		return nil
	}
	var out map[string]string
	for _, a := range arrowschema.ParseDDL(v.DDL).Alters {
		if a.Kind != arrowschema.AlterRename {
			continue
		}
		i := slices.IndexFunc(v.Columns, func(c arrowschema.Column) bool { return c.Name == a.NewName })
		if i < 0 {
			i = slices.IndexFunc(v.Columns, func(c arrowschema.Column) bool { return strings.EqualFold(c.Name, a.NewName) })
		}
		if i < 0 {
			continue // the refreshed metadata has no such column
		}
		old := a.Column.Name
		if slices.Contains(partition.FolderKeys, strings.ToLower(old)) {
			old += "_" // as FieldName writes such a column
		}
		if out == nil {
			out = map[string]string{}
		}
		out[v.FieldName(i)] = old
	}
	return out
}

// optional is f with it and every field nested in it nullable.
func optional(f arrow.Field) arrow.Field {
	f.Nullable = true
	switch dt := f.Type.(type) {
	case *arrow.StructType:
		children := dt.Fields()
		for i := range children {
			children[i] = optional(children[i])
		}
		f.Type = arrow.StructOf(children...)
	case *arrow.ListType:
		f.Type = arrow.ListOfField(optional(dt.ElemField()))
	}
	return f
}

// sameNullability is annotated (f with field IDs) with f's nullability,
// nested fields included.
func sameNullability(annotated, f arrow.Field) arrow.Field {
	annotated.Nullable = f.Nullable
	switch dt := annotated.Type.(type) {
	case *arrow.StructType:
		children, want := dt.Fields(), f.Type.(*arrow.StructType).Fields()
		for i := range children {
			children[i] = sameNullability(children[i], want[i])
		}
		annotated.Type = arrow.StructOf(children...)
	case *arrow.ListType:
		annotated.Type = arrow.ListOfField(sameNullability(dt.ElemField(), f.Type.(*arrow.ListType).ElemField()))
	}
	return annotated
}

// noteFile keeps what an encoded file's manifest entry takes from its
// encoding until its round is published: its footer, the NaN count of
// each floating-point column (which the footer does not hold), and the
// entry itself, built now (tables.Publisher.PrepareEntry).
func (t *icebergTables) noteFile(f *writer.File) error {
	footer, err := tables.FooterBytes(f.Data)
	if err != nil {
		return fmt.Errorf("file %s: %w", f.Key, err)
	}
	df := t.pub.PrepareEntry(tables.DataFile{Table: f.Table, Version: f.Version, Location: t.base + "/" + f.Key,
		SizeBytes: int64(len(f.Data)), FooterBytes: footer, NaNs: tables.NaNs(f.Columns)})
	t.mu.Lock()
	t.files[f.Key] = df
	t.mu.Unlock()
	return nil
}

// Publish commits the round's data files, one snapshot per table.
func (t *icebergTables) Publish(ctx context.Context, r commit.Round) error {
	round := tables.Round{RunID: t.run, RoundID: r.ID}
	t.mu.Lock()
	for _, f := range r.Files {
		if f.Table == "" {
			continue // dead letters
		}
		df, ok := t.files[f.Key]
		if !ok {
			t.mu.Unlock()
			return fmt.Errorf("file %s has no footer kept for it; it cannot be published", f.Key)
		}
		df.SourcePartition, df.FirstOffset, df.LastOffset = f.Partition, f.FirstOffset, f.LastOffset
		round.Files = append(round.Files, df)
	}
	t.mu.Unlock()
	if len(round.Files) == 0 {
		return nil
	}
	committed, err := t.pub.Publish(ctx, round)
	if err != nil {
		return err
	}
	t.mu.Lock()
	for _, f := range round.Files {
		delete(t.files, f.Location[len(t.base)+1:])
	}
	t.mu.Unlock()
	for _, c := range committed {
		t.log.Info("iceberg table committed", "table", c.Table, "snapshot", c.SnapshotID, "files", c.Files, "round", r.ID, "already", c.Already)
	}
	return nil
}

// Recover is commit.RecoveringPublisher's: the files of the partition
// that its checkpoint does not cover are about to be deleted and their
// records exported again, so every table that a round of them reached
// (a crash between the tables' commits and the checkpoint) lets go of
// them first. Rolling back rather than forward keeps the protocol's one
// rule: what the checkpoint does not cover is written again.
func (t *icebergTables) Recover(ctx context.Context, keys []string) error {
	byTable := map[string][]string{}
	for _, k := range keys {
		seg, _, ok := strings.Cut(k, "/")
		if !ok || !strings.HasSuffix(k, ".parquet") {
			continue // dead letters
		}
		table, err := partition.ParseTableSegment(seg)
		if err != nil {
			continue // not a table's folder
		}
		byTable[table] = append(byTable[table], k)
	}
	return t.withdraw(ctx, byTable)
}

// Withdraw is commit.WithdrawingPublisher's: this run published files of
// a partition whose checkpoint it then lost to another instance, which
// exports their records again; the tables let go of them before they are
// deleted.
func (t *icebergTables) Withdraw(ctx context.Context, files []commit.File) error {
	byTable := map[string][]string{}
	for _, f := range files {
		if f.Table != "" {
			byTable[f.Table] = append(byTable[f.Table], f.Key)
		}
	}
	return t.withdraw(ctx, byTable)
}

// withdraw removes the files (keys by source table) from their tables.
func (t *icebergTables) withdraw(ctx context.Context, byTable map[string][]string) error {
	for _, table := range slices.Sorted(maps.Keys(byTable)) {
		locations := make([]string, len(byTable[table]))
		for i, k := range byTable[table] {
			locations[i] = t.base + "/" + k
		}
		if _, err := t.pub.Withdraw(ctx, table, locations); err != nil {
			return err
		}
	}
	return nil
}
