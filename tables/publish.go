// Package tables publishes the exporter's data files as Apache Iceberg
// tables through a catalog (hadoop, sql, rest or glue), with iceberg-go:
// it never writes Iceberg metadata, manifests or Avro itself.
//
// The protocol, as the commit protocol drives it:
//
//  1. Before a schema version's first file is written, PrepareVersion
//     creates the table or updates its schema and returns the field IDs
//     the version's Parquet files must carry. It is idempotent: the
//     table records which Iceberg schema each source version got.
//  2. The commit protocol uploads a round's files and records the round
//     as complete (its intent lists every file).
//  3. Publish commits, table by table, one snapshot appending the round's
//     files of that table. Its summary names the run, the round and the
//     source offsets the files cover.
//  4. Only then does the commit protocol write its checkpoint and
//     acknowledge the source.
//
// A crash between two tables' commits leaves some tables with the round
// and some without. Recovery calls Publish again with the same round:
// a table whose snapshot history already holds a snapshot of that run
// and round is left as it is, so each table gets the round exactly once.
// The same check runs after a commit whose outcome is unknown, and a
// commit that lost a race with another writer is retried on the table as
// the catalog has it then.
package tables

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
)

// Publisher creates and evolves Iceberg tables and commits rounds of data
// files to them. Its methods are safe for concurrent use on different
// tables; the catalog's optimistic concurrency orders commits to one.
type Publisher struct {
	cat    catalog.Catalog
	opened catalog.Catalog // the catalog Open opened, which Close closes
	cfg    Config
	log    *slog.Logger
	loaded loadedTables
	// named holds, by Iceberg identifier, the source table that took it
	// first in this process (Identifier): with --catalog-namespace two
	// source names can flatten to one table name.
	namedMu sync.Mutex
	named   map[string]string
	checked map[string]bool // source tables CheckSource has looked at
	warm    warming         // tables loaded ahead (warm.go)
}

// Close releases the catalog's connections.
func (p *Publisher) Close() error {
	p.warm.close()
	if c, ok := p.opened.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Catalog returns the iceberg-go catalog, for reading tables.
func (p *Publisher) Catalog() catalog.Catalog { return p.cat }

// DataFile is one uploaded Parquet file of a round.
type DataFile struct {
	// Table is the source's qualified name, Version its schema version:
	// PrepareVersion must have been called for it.
	Table   string
	Version int
	// Location is the file's full URI as readers reach it
	// (file:///DIR/KEY, s3://BUCKET/PREFIX/KEY).
	Location string
	// SizeBytes is the file's length.
	SizeBytes int64
	// Footer is the file's Parquet footer as the encoder wrote it, held
	// in memory: the record count, column sizes, value and null counts
	// and bounds come from its statistics, never from reading the file.
	// Without it, FooterBytes is the same footer as encoded (FooterBytes).
	Footer      *metadata.FileMetaData
	FooterBytes []byte
	// NaNs are the NaN values of each floating-point column by field ID,
	// as the encoder counted them (a Parquet footer has no such count); a
	// column it lacks has none. Nil when unknown: the entry then has no
	// NaN counts.
	NaNs map[int]int64
	// SourcePartition, FirstOffset and LastOffset are the source range
	// the file covers, as the round's intent records it.
	SourcePartition string
	FirstOffset     int64
	LastOffset      int64
	// entry is the manifest entry PrepareEntry built ahead of the commit.
	entry *builtEntry
}

// builtEntry is a file's manifest entry, and the table, partition spec
// and schema it was built with. Spec and schema ids are only unique
// within one table: a table dropped and created again under the same
// name starts them over, perhaps with another partitioning.
type builtEntry struct {
	df        iceberg.DataFile
	tableUUID [16]byte
	specID    int
	schemaID  int
}

// fits reports whether e was built for the table state tbl and the
// version schema sc.
func (e *builtEntry) fits(tbl *table.Table, sc *iceberg.Schema) bool {
	md := tbl.Metadata()
	return e.tableUUID == [16]byte(md.TableUUID()) && e.specID == md.DefaultPartitionSpec() && e.schemaID == sc.ID
}

// PrepareEntry builds the manifest entry of f, whose version is
// prepared, ahead of its round's commit, and returns f holding it. The
// exporter calls it as each file is uploaded, so that the entries are
// built beside the export rather than in the round's commits, which
// wait for them. A round's files held until their commit then hold the
// entry and the footer's bytes (FooterBytes), not the parsed footer:
// its many small objects, for hundreds of files, made each of the
// collector's cycles scan tens of megabytes more. When the table's
// partition spec or the version's schema is not the one the entry was
// built with by the commit, the commit builds it again from
// FooterBytes.
func (p *Publisher) PrepareEntry(f DataFile) DataFile {
	ident, err := p.Identifier(f.Table)
	if err != nil {
		return f // the commit reports it
	}
	tbl := p.loaded.get(ident)
	if tbl == nil {
		return f
	}
	sc, ok := versionSchema(tbl, f.Version)
	if !ok {
		return f
	}
	df, err := dataFile(tbl, sc, f)
	if err != nil {
		return f // the commit builds it again, and reports it
	}
	md := tbl.Metadata()
	f.entry = &builtEntry{df: df, tableUUID: [16]byte(md.TableUUID()), specID: md.DefaultPartitionSpec(), schemaID: sc.ID}
	if f.FooterBytes != nil {
		f.Footer = nil
	}
	return f
}

// Round is a commit round's files, all uploaded.
type Round struct {
	// RunID and RoundID name the round; together they recognise its
	// snapshots on recovery, so a recovering run passes the RunID of the
	// run that made the round.
	RunID   string
	RoundID string
	Files   []DataFile
}

// Committed says what Publish did for one table.
type Committed struct {
	Table      string // the source's qualified name
	Identifier table.Identifier
	SnapshotID int64
	Files      int
	// Already is true when the table held the round before this call.
	Already bool
}

// Publish commits each table's files of r as one snapshot of that table
// (see the package comment). Up to Config.PublishConcurrency tables are
// committed at once: each commit is a few catalog round trips and file
// writes, and a round of hundreds of tables would otherwise wait for
// them one after the other. A table that fails does not stop the
// others, and the error names every table that failed: the round is
// then not published, and the caller must neither checkpoint nor
// acknowledge it, but call Publish again.
func (p *Publisher) Publish(ctx context.Context, r Round) ([]Committed, error) {
	if r.RunID == "" || r.RoundID == "" {
		return nil, errors.New("publish round: run id and round id are required to recognise the round on recovery")
	}
	byTable := make(map[string][]DataFile)
	for _, f := range r.Files {
		byTable[f.Table] = append(byTable[f.Table], f)
	}
	names := make([]string, 0, len(byTable))
	for name := range byTable {
		names = append(names, name)
	}
	sort.Strings(names)
	results := make([]Committed, len(names))
	errs := make([]error, len(names))
	var g errgroup.Group
	g.SetLimit(p.cfg.PublishConcurrency)
	for i, name := range names {
		g.Go(func() error {
			c, err := p.publishTable(ctx, r, name, byTable[name])
			if err != nil {
				errs[i] = fmt.Errorf("publish round %s/%s to table %q: %w", r.RunID, r.RoundID, name, err)
			}
			results[i] = c
			return nil
		})
	}
	g.Wait()
	var out []Committed
	for i := range names {
		if errs[i] == nil {
			out = append(out, results[i])
		}
	}
	return out, errors.Join(errs...)
}

func (p *Publisher) publishTable(ctx context.Context, r Round, name string, files []DataFile) (Committed, error) {
	ident, err := p.Identifier(name)
	if err != nil {
		return Committed{}, err
	}
	c := Committed{Table: name, Identifier: ident, Files: len(files)}
	tbl := p.loaded.get(ident)
	if tbl == nil || !hasVersions(tbl, files) {
		// Not loaded yet, or loaded before another instance gave it a
		// version that these files have.
		if tbl, err = p.load(ctx, ident); err != nil {
			return c, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
		}
	}
	summary, err := summaryProps(r, files)
	if err != nil {
		return c, err
	}
	for attempt := 1; ; attempt++ {
		if s := RoundSnapshot(tbl, r.RunID, r.RoundID); s != nil {
			c.SnapshotID, c.Already = s.SnapshotID, true
			return c, nil
		}
		// Built against the state this attempt commits on: a retry's
		// reloaded table may have another spec, or be another table
		// under the same name (entries built ahead that still fit it
		// cost nothing to take again).
		dfs, err := dataFiles(tbl, files)
		if err != nil {
			return c, err
		}
		start := time.Now()
		committed, err := appendFiles(ctx, tbl, dfs, summary)
		if err == nil {
			p.loaded.put(ident, committed)
			c.SnapshotID = committed.CurrentSnapshot().SnapshotID
			p.committed(name, committed.CurrentSnapshot(), time.Since(start))
			p.log.Debug("iceberg round committed", "table", strings.Join(ident, "."), "round", r.RoundID,
				"snapshot", c.SnapshotID, "files", len(files), "attempt", attempt, "latency", time.Since(start))
			return c, nil
		}
		// A failed commit may still have reached the catalog (a lost
		// response): the reloaded table says, through the round id.
		reloaded, lerr := p.load(ctx, ident)
		if lerr == nil {
			if s := RoundSnapshot(reloaded, r.RunID, r.RoundID); s != nil {
				c.SnapshotID = s.SnapshotID
				p.committed(name, s, time.Since(start))
				return c, nil
			}
		}
		conflict := lerr == nil && raced(err, tbl, reloaded)
		if !conflict || attempt >= p.cfg.CommitAttempts {
			return c, commitFailed(fmt.Sprintf("commit of %d files", len(files)), ident, attempt, p.cfg.CommitAttempts, err, lerr, conflict)
		}
		p.conflicted(name)
		p.log.Info("iceberg commit conflict, retrying", "table", strings.Join(ident, "."), "round", r.RoundID, "attempt", attempt, "error", err)
		if err := waitRetry(ctx, attempt); err != nil {
			return c, err
		}
		tbl = reloaded
	}
}

// hasVersions reports whether tbl has an Iceberg schema for the version
// of every file.
func hasVersions(tbl *table.Table, files []DataFile) bool {
	for _, f := range files {
		if _, ok := versionSchema(tbl, f.Version); !ok {
			return false
		}
	}
	return true
}

// appendFiles commits one snapshot adding dfs. The round id check stands
// in for iceberg-go's duplicate check, which reads every manifest of the
// table on each commit.
func appendFiles(ctx context.Context, tbl *table.Table, dfs []iceberg.DataFile, summary iceberg.Properties) (*table.Table, error) {
	txn := tbl.NewTransaction()
	if _, ok := tbl.Properties()[table.MetadataDeleteAfterCommitEnabledKey]; !ok {
		// A table created before the exporter set it (createOptions)
		// gets it with its next round; one that says false keeps it.
		if err := txn.SetProperties(iceberg.Properties{table.MetadataDeleteAfterCommitEnabledKey: "true"}); err != nil {
			return nil, err
		}
	}
	if err := txn.AddDataFiles(ctx, dfs, summary, table.WithoutDuplicateCheck()); err != nil {
		return nil, err
	}
	return txn.Commit(ctx)
}

// dataFiles returns the manifest entries of files, each with the
// Iceberg schema of its version: built ahead (PrepareEntry) when built
// for the table's partition spec and that schema, from the footer
// otherwise.
func dataFiles(tbl *table.Table, files []DataFile) ([]iceberg.DataFile, error) {
	out := make([]iceberg.DataFile, 0, len(files))
	for _, f := range files {
		sc, ok := versionSchema(tbl, f.Version)
		if !ok {
			return nil, fmt.Errorf("file %s: table has no schema for version %d (PrepareVersion was not called for it)", f.Location, f.Version)
		}
		if e := f.entry; e != nil && e.fits(tbl, sc) {
			out = append(out, e.df)
			continue
		}
		df, err := dataFile(tbl, sc, f)
		if err != nil {
			return nil, err
		}
		out = append(out, df)
	}
	return out, nil
}

// dataFile builds the manifest entry of f from its footer's statistics,
// with its version's schema sc.
func dataFile(tbl *table.Table, sc *iceberg.Schema, f DataFile) (iceberg.DataFile, error) {
	md := f.Footer
	if md == nil && f.FooterBytes != nil {
		var err error
		if md, err = parseFooter(f.FooterBytes); err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Location, err)
		}
	}
	if md == nil {
		return nil, fmt.Errorf("file %s: no footer to take its statistics from", f.Location)
	}
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema:        sc,
		Spec:          tbl.Spec(),
		Format:        iceberg.ParquetFile,
		Metadata:      md,
		FilePath:      f.Location,
		FileSize:      f.SizeBytes,
		Content:       iceberg.EntryContentData,
		Properties:    tbl.Properties(),
		FormatVersion: tbl.Metadata().Version(),
	})
	if err != nil {
		return nil, fmt.Errorf("file %s: data file entry (a file in a day(op_ts) partition must hold one day of op_ts): %w", f.Location, err)
	}
	if df, err = withFileMetrics(df, md, f.NaNs, tbl.Spec(), sc); err != nil {
		return nil, fmt.Errorf("file %s: %w", f.Location, err)
	}
	return df, nil
}

// offsetRange is the part of a source partition a table's files cover.
type offsetRange struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

func summaryProps(r Round, files []DataFile) (iceberg.Properties, error) {
	ranges := make(map[string]offsetRange)
	for _, f := range files {
		rg, ok := ranges[f.SourcePartition]
		if !ok {
			rg = offsetRange{First: f.FirstOffset, Last: f.LastOffset}
		}
		rg.First, rg.Last = min(rg.First, f.FirstOffset), max(rg.Last, f.LastOffset)
		ranges[f.SourcePartition] = rg
	}
	offsets, err := json.Marshal(ranges) // map keys come out sorted
	if err != nil {
		return nil, fmt.Errorf("snapshot summary offsets: %w", err)
	}
	return iceberg.Properties{
		SummaryRunID:   r.RunID,
		SummaryRoundID: r.RoundID,
		SummaryOffsets: string(offsets),
	}, nil
}

// RoundSnapshot returns the snapshot of the table's current history
// (the current snapshot and its ancestors) committed by run and round,
// or nil.
func RoundSnapshot(tbl *table.Table, runID, roundID string) *table.Snapshot {
	seen := make(map[int64]bool)
	for s := tbl.CurrentSnapshot(); s != nil && !seen[s.SnapshotID]; {
		seen[s.SnapshotID] = true
		if s.Summary != nil && s.Summary.Properties[SummaryRoundID] == roundID && s.Summary.Properties[SummaryRunID] == runID {
			return s
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return nil
}

// waitRetry sleeps before attempt+1: capped exponential backoff with full
// jitter, cut short by ctx.
func waitRetry(ctx context.Context, attempt int) error {
	limit := min(50*time.Millisecond<<min(attempt, 8), 5*time.Second)
	t := time.NewTimer(rand.N(limit) + time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
