package tables

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// ErrBadName is wrapped by errors for a source table name that cannot
// name an Iceberg table: the caller sends its records to the dead
// letters with the reason, as it does for names the layout refuses.
var ErrBadName = errors.New("table name not allowed in the catalog")

// Keys of the table properties and snapshot summaries Publisher writes.
const (
	propPrefix = "lakehouse-exporter."
	// PropSourceTable is the source's qualified name (table property).
	PropSourceTable = propPrefix + "source-table"
	// PropCreatedAt is when the exporter created the table (RFC 3339):
	// files in its folders older than that were exported before the table
	// was, and are not its orphans (the metadata's own history starts
	// later once expiry has cut it).
	PropCreatedAt = propPrefix + "created-at"
	// PropExporterVersion names the exporter version that created the
	// table (table property).
	PropExporterVersion = propPrefix + "version"
	// propSchemaPrefix + N holds the Iceberg schema id of source schema
	// version N (table property), so that files of version N get the
	// field IDs that version was given, whatever versions came since.
	propSchemaPrefix = propPrefix + "schema-version."
	// SummaryRunID, SummaryRoundID and SummaryOffsets are snapshot summary
	// properties: the run and the round that committed the snapshot, and
	// the source offsets its files cover (JSON: partition → first, last).
	SummaryRunID   = propPrefix + "run-id"
	SummaryRoundID = propPrefix + "round-id"
	SummaryOffsets = propPrefix + "source-offsets"
)

// TableVersion is one schema version of a source table.
type TableVersion struct {
	// Table is the source's qualified name (SALES.ORDERS).
	Table string
	// Version is the schema version number, from 1.
	Version int
	// Schema is the version's data-file schema (arrowschema.Version.Schema).
	Schema *arrow.Schema
	// Renames are the columns the DDL statement that opened the version
	// renamed: new name → old name, as the data files name them. A
	// renamed column keeps its Iceberg field ID, so readers find its older
	// values under the new name. Metadata alone cannot tell a rename from
	// a dropped column and an added one, which is what a column renamed
	// without a DDL statement becomes. The renames apply to the table's
	// schema as it is: prepare the versions in order.
	Renames map[string]string
}

// ErrVersionSuperseded is wrapped by PrepareVersion's error for a version
// older than the newest the table has, that was never given a schema.
var ErrVersionSuperseded = errors.New("the table has a newer source version")

// Prepared is what PrepareVersion returns for a table version.
type Prepared struct {
	// Identifier is the table's Iceberg identifier (namespace levels,
	// then the table name).
	Identifier table.Identifier
	// SchemaID is the Iceberg schema the version's files are written in.
	SchemaID int
	// Schema is the version's Arrow schema with every field, nested ones
	// included, carrying its Iceberg field ID as the PARQUET:field_id
	// metadata the Parquet writers put into the file.
	Schema *arrow.Schema
}

// Identifier maps a source table's qualified name to its Iceberg table
// identifier (see Config.Namespace).
func (p *Publisher) Identifier(qualTable string) (table.Identifier, error) {
	parts := strings.Split(qualTable, ".")
	if err := checkName(parts); err != nil {
		return nil, fmt.Errorf("table %q: %w", qualTable, err)
	}
	ident := parts
	if p.cfg.Namespace != "" {
		ident = append(strings.Split(p.cfg.Namespace, "."), strings.Join(parts, "_"))
	} else if len(parts) < 2 {
		return nil, fmt.Errorf("table %q has no schema to take the namespace from; set the catalog namespace: %w", qualTable, ErrBadName)
	}
	local := strings.HasPrefix(p.cfg.Warehouse, "file:")
	for _, part := range ident {
		if why := locationProblem(part, local); why != "" {
			return nil, fmt.Errorf("table %q: name part %q has %s, and the table's metadata folder is named after it: %w", qualTable, part, why, ErrBadName)
		}
	}
	if other := p.claim(ident, qualTable); other != "" {
		return nil, fmt.Errorf("table %q: its Iceberg name %s is already the table of source table %q (the catalog namespace flattens both names to it): %w",
			qualTable, strings.Join(ident, "."), other, ErrBadName)
	}
	if p.cfg.Kind == REST && strings.Contains(ident[len(ident)-1], "%") {
		// iceberg-go (v0.7.0) puts table names into the REST request
		// paths unescaped: "%41" would name another table, and "%ER"
		// sends the request to /v1. Escaped, Jetty-based servers
		// (Iceberg's own) refuse it as ambiguous.
		return nil, fmt.Errorf("table %q: a %% in a table name cannot reach a REST catalog: %w", qualTable, ErrBadName)
	}
	return ident, nil
}

// CheckSource refuses (ErrBadName) a source table whose Iceberg table
// exists and was created for another source table (the catalog namespace
// flattens both names to it), so that the caller dead-letters its records
// before any is written. An error reaching the catalog is not reported
// here: publishing reports it.
func (p *Publisher) CheckSource(ctx context.Context, qualTable string) error {
	ident, err := p.Identifier(qualTable)
	if err != nil {
		return err
	}
	// Once per table: a refused one is refused by Identifier from then
	// on (sameSource hands its name to the other), and a table waiting
	// for its metadata would otherwise cost a load per record.
	p.namedMu.Lock()
	checked := p.checked[qualTable]
	if p.checked == nil {
		p.checked = map[string]bool{}
	}
	p.checked[qualTable] = true
	p.namedMu.Unlock()
	if checked {
		return nil
	}
	tbl := p.loaded.get(ident)
	if tbl == nil {
		p.warmNamespace(ident)
		p.warm.await(ctx, ident)
		tbl = p.loaded.get(ident)
	}
	if tbl == nil {
		if tbl, err = p.load(ctx, ident); err != nil {
			return nil
		}
	}
	return p.sameSource(ident, tbl, qualTable)
}

// sameSource refuses tbl for qualTable when it was created for another
// source table, which keeps the name from then on.
func (p *Publisher) sameSource(ident table.Identifier, tbl *table.Table, qualTable string) error {
	src, ok := tbl.Properties()[PropSourceTable]
	if !ok || src == qualTable {
		return nil // the table's own, or one created before the property
	}
	p.namedMu.Lock()
	p.named[identKey(ident)] = src
	p.namedMu.Unlock()
	return fmt.Errorf("table %q: its Iceberg table %s holds source table %q (the catalog namespace flattens both names to it); give --catalog-namespace another value, or none, for one of them: %w",
		qualTable, strings.Join(ident, "."), src, ErrBadName)
}

// claim records that qualTable is the source table of ident, and returns
// the other source table that claimed ident first, if any.
func (p *Publisher) claim(ident table.Identifier, qualTable string) string {
	key := identKey(ident)
	p.namedMu.Lock()
	defer p.namedMu.Unlock()
	if p.named == nil {
		p.named = map[string]string{}
	}
	if other, ok := p.named[key]; ok && other != qualTable {
		return other
	}
	p.named[key] = qualTable
	return ""
}

// CheckDataFolder refuses, for a catalog, a table whose data folder (its
// layout segment, partition.TableSegment) in the sink at sinkLocation
// would give its data files locations that Iceberg readers take for
// other paths (see locationProblem).
func CheckDataFolder(sinkLocation, segment string) error {
	if why := locationProblem(segment, strings.HasPrefix(sinkLocation, "file:")); why != "" {
		return fmt.Errorf("its folder %q has %s, and its data files' locations would name another path: %w", segment, why, ErrBadName)
	}
	return nil
}

// CheckLocation refuses a folder or bucket prefix (file:///DIR,
// s3://BUCKET/PREFIX) that Iceberg readers would take for another path
// in the locations under it (see locationProblem): a sink or warehouse
// of Iceberg tables.
func CheckLocation(loc string) error {
	scheme, rest, _ := strings.Cut(loc, "://")
	for _, seg := range strings.Split(strings.Trim(rest, "/"), "/") {
		if why := locationProblem(seg, scheme == "file"); why != "" {
			return fmt.Errorf("%s cannot hold Iceberg tables: its path segment %q has %s; choose another folder or prefix", loc, seg, why)
		}
	}
	return nil
}

// locationProblem says why a path segment of an Iceberg location would
// be read as another path, or "". '#' and '?' end a location's path for
// the URI parsers of Iceberg's readers (Java's S3FileIO and Hadoop Path,
// iceberg-go): a table "ORDERS#ARCH" would be read, and its orphans
// planned, in the folder of "ORDERS". On local storage (file://)
// iceberg-go reads a location as a URL: it decodes %XX (a folder
// "ORDER%20ITEMS" read as "ORDER ITEMS") and its file-system catalog
// writes metadata under an escaped spelling of a name with a space or a
// non-ASCII letter, so a segment must be what a URL path holds as it is.
func locationProblem(segment string, local bool) string {
	if strings.ContainsAny(segment, "#?") {
		return "a '#' or '?', which URI readers take for the end of a location's path"
	}
	if local && (strings.Contains(segment, "%") || !urlHoldsAsIs(segment)) {
		return "a '%', space or other character that a file:// location cannot hold as it is (iceberg-go reads local locations as URLs); an S3 sink has no such limit"
	}
	return ""
}

// urlHoldsAsIs reports whether a file:// URL reads segment as the path
// segment it is and writes it back unchanged.
func urlHoldsAsIs(segment string) bool {
	loc := "file:///" + segment
	u, err := url.Parse(loc)
	return err == nil && u.Path == "/"+segment && u.String() == loc
}

// checkName refuses identifier parts that catalogs refuse or that would
// become other paths in a file-system catalog.
func checkName(parts []string) error {
	for _, part := range parts {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("empty, . or .. name part: %w", ErrBadName)
		}
		for _, r := range part {
			if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
				return fmt.Errorf("name part %q has a slash, backslash or control character: %w", part, ErrBadName)
			}
		}
	}
	return nil
}

// PrepareVersion makes sure the Iceberg table of tv.Table exists and has
// a schema for tv.Version, and returns that schema's field IDs as an
// annotated Arrow schema for the version's data files. It must be called
// before a version's first file is written: the files carry the field
// IDs.
//
// A new table gets the version's columns, partition spec day(op_ts) (or
// as configured), sort order op_ts and the exporter's table properties. A
// version newer than every version the table has seen becomes a schema
// update, matched to the table's current schema by column name: new
// columns get new field IDs, missing ones are dropped, a type that
// Iceberg can promote in place (int to long, float to double, decimal
// precision widening) is promoted, and any other type change drops the
// column and adds a new one of the same name with a new ID. The update
// and the record of which schema the version maps to are one commit, so
// calling PrepareVersion again (after a crash, or from another instance)
// returns the same IDs.
func (p *Publisher) PrepareVersion(ctx context.Context, tv TableVersion) (Prepared, error) {
	if tv.Schema == nil || tv.Version < 1 {
		return Prepared{}, fmt.Errorf("prepare table %q version %d: need a schema and a version from 1", tv.Table, tv.Version)
	}
	ident, err := p.Identifier(tv.Table)
	if err != nil {
		return Prepared{}, err
	}
	want, err := table.ArrowSchemaToIcebergWithFreshIDs(tv.Schema, false)
	if err != nil {
		return Prepared{}, fmt.Errorf("table %q version %d: its columns have no Iceberg type: %w", tv.Table, tv.Version, err)
	}
	tbl := p.loaded.get(ident)
	if tbl == nil || !hasVersion(tbl, tv.Version) {
		// Not loaded yet, or the version is new here: another instance
		// may have given it a schema since.
		if tbl, err = p.loadOrCreate(ctx, ident, tv, want); err != nil {
			return Prepared{}, err
		}
	}
	if err := p.sameSource(ident, tbl, tv.Table); err != nil {
		return Prepared{}, err
	}
	for attempt := 1; ; attempt++ {
		if sc, ok := versionSchema(tbl, tv.Version); ok {
			annotated, err := annotate(tv.Schema, sc)
			if err != nil {
				return Prepared{}, fmt.Errorf("table %q version %d: %w", tv.Table, tv.Version, err)
			}
			return Prepared{Identifier: ident, SchemaID: sc.ID, Schema: annotated}, nil
		}
		if newest := newestVersion(tbl); tv.Version < newest {
			return Prepared{}, fmt.Errorf("table %q version %d is older than version %d that the Iceberg table %s already has, and was never given a schema there; it cannot be published: %w", tv.Table, tv.Version, newest, strings.Join(ident, "."), ErrVersionSuperseded)
		}
		err := p.evolve(ctx, tbl, tv, want)
		reloaded, lerr := p.load(ctx, ident)
		if err == nil && lerr != nil {
			return Prepared{}, fmt.Errorf("reload table %s: %w", strings.Join(ident, "."), lerr)
		}
		if err != nil {
			// Another writer may have committed first, perhaps this very
			// version: look again at the table as the catalog has it now.
			conflict := lerr == nil && raced(err, tbl, reloaded)
			if !conflict || !hasVersion(reloaded, tv.Version) {
				if !conflict || attempt >= p.cfg.CommitAttempts {
					return Prepared{}, commitFailed(fmt.Sprintf("schema update for version %d of %q", tv.Version, tv.Table), ident, attempt, p.cfg.CommitAttempts, err, lerr, conflict)
				}
				if err := waitRetry(ctx, attempt); err != nil {
					return Prepared{}, err
				}
			}
		}
		tbl = reloaded
	}
}

// loadOrCreate loads the table, creating it (and its namespace) with
// version tv as its first schema when it does not exist.
func (p *Publisher) loadOrCreate(ctx context.Context, ident table.Identifier, tv TableVersion, want *iceberg.Schema) (*table.Table, error) {
	name := strings.Join(ident, ".")
	tbl, err := p.load(ctx, ident)
	if err == nil {
		return tbl, nil
	}
	if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	ns := catalog.NamespaceFromIdent(ident)
	if err := p.cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		// Another instance creating it at the same moment may make the
		// server fail rather than answer "already exists" (Iceberg's
		// JDBC-backed REST server reports the lost insert as an SQL
		// error): what counts is that the namespace is there.
		if ok, cerr := p.cat.CheckNamespaceExists(ctx, ns); cerr != nil || !ok {
			return nil, fmt.Errorf("create namespace %s for table %q: %w", strings.Join(ns, "."), tv.Table, err)
		}
	}
	opts, err := p.createOptions(tv, want)
	if err != nil {
		return nil, err
	}
	tbl, err = p.cat.CreateTable(ctx, ident, want, opts...)
	if err != nil {
		// Another instance created it first, whether the server says
		// so or fails the same way as above.
		if errors.Is(err, catalog.ErrTableAlreadyExists) {
			tbl, err = p.loadCreated(ctx, ident)
		} else if ok, cerr := p.cat.CheckTableExists(ctx, ident); cerr == nil && ok {
			tbl, err = p.loadCreated(ctx, ident)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create table %s for %q: %w", name, tv.Table, err)
	}
	p.loaded.put(ident, tbl)
	p.log.Info("iceberg table created", "table", name, "source", tv.Table, "schema_version", tv.Version)
	return tbl, nil
}

// loadCreated loads a table that another writer is creating. The
// hadoop catalog makes the table's folder before its first metadata
// file, and says "already exists" to a second creator and "no such
// table" to its load in between: the load is tried again, a few times.
func (p *Publisher) loadCreated(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	for attempt := 1; ; attempt++ {
		tbl, err := p.cat.LoadTable(ctx, ident)
		if !errors.Is(err, catalog.ErrNoSuchTable) || attempt >= p.cfg.CommitAttempts {
			return tbl, err
		}
		if err := waitRetry(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// createOptions are the partition spec, sort order and properties of a
// new table whose first schema is want (version tv).
func (p *Publisher) createOptions(tv TableVersion, want *iceberg.Schema) ([]catalog.CreateTableOpt, error) {
	opTS, ok := want.FindFieldByName("op_ts")
	if !ok {
		return nil, fmt.Errorf("table %q version %d has no op_ts column to partition and sort by", tv.Table, tv.Version)
	}
	spec := *iceberg.UnpartitionedSpec
	var transform iceberg.Transform
	switch p.cfg.Partitioning {
	case ByDay:
		transform = iceberg.DayTransform{}
	case ByHour:
		transform = iceberg.HourTransform{}
	}
	if transform != nil {
		spec = iceberg.NewPartitionSpec(iceberg.PartitionField{
			SourceIDs: []int{opTS.ID},
			FieldID:   1000,
			Name:      "op_ts_" + string(p.cfg.Partitioning),
			Transform: transform,
		})
	}
	order, err := table.NewSortOrder(1, []table.SortField{{
		SourceIDs: []int{opTS.ID},
		Transform: iceberg.IdentityTransform{},
		Direction: table.SortASC,
		NullOrder: table.NullsFirst,
	}})
	if err != nil {
		return nil, fmt.Errorf("sort order by op_ts: %w", err)
	}
	props := iceberg.Properties{
		"format-version":         "2",
		"write.format.default":   "parquet",
		PropSourceTable:          tv.Table,
		PropExporterVersion:      p.cfg.ExporterVersion,
		PropCreatedAt:            time.Now().UTC().Format(time.RFC3339Nano),
		schemaProp(tv.Version):   "0",
		"write.parquet.field-id": "true",
		// Every round writes a metadata file per table it touches: a
		// round a minute leaves 1,440 a day per table, kept forever
		// unless the commit deletes those its metadata log no longer
		// lists (the newest write.metadata.previous-versions-max, 100 by
		// default, are kept).
		table.MetadataDeleteAfterCommitEnabledKey: "true",
	}
	if p.cfg.ExporterVersion == "" {
		delete(props, PropExporterVersion)
	}
	return []catalog.CreateTableOpt{
		catalog.WithPartitionSpec(&spec),
		catalog.WithSortOrder(order),
		catalog.WithProperties(props),
	}, nil
}

func schemaProp(version int) string { return propSchemaPrefix + strconv.Itoa(version) }

// hasVersion reports whether tbl has an Iceberg schema for a version.
func hasVersion(tbl *table.Table, version int) bool {
	_, ok := versionSchema(tbl, version)
	return ok
}

// versionSchema returns the Iceberg schema the table recorded for a
// source schema version.
func versionSchema(tbl *table.Table, version int) (*iceberg.Schema, bool) {
	v, ok := tbl.Properties()[schemaProp(version)]
	if !ok {
		return nil, false
	}
	id, err := strconv.Atoi(v)
	if err != nil {
		return nil, false
	}
	for _, sc := range tbl.Metadata().Schemas() {
		if sc.ID == id {
			return sc, true
		}
	}
	return nil, false
}

// newestVersion is the newest source schema version the table recorded.
func newestVersion(tbl *table.Table) int {
	newest := 0
	for k := range tbl.Properties() {
		if n, err := strconv.Atoi(strings.TrimPrefix(k, propSchemaPrefix)); err == nil && strings.HasPrefix(k, propSchemaPrefix) && n > newest {
			newest = n
		}
	}
	return newest
}

// evolve commits the schema update that makes tbl's current schema the
// one of version tv, with the record of the version's schema id.
func (p *Publisher) evolve(ctx context.Context, tbl *table.Table, tv TableVersion, want *iceberg.Schema) error {
	txn := tbl.NewTransaction()
	u := txn.UpdateSchema(true, false)
	e := evolver{u: u, renames: tv.Renames}
	e.structs(nil, tbl.Schema().Fields(), want.Fields())
	if e.err != nil {
		return e.err
	}
	id := tbl.Schema().ID
	if e.changed {
		if err := u.Commit(); err != nil {
			return fmt.Errorf("schema update: %w", err)
		}
		staged, err := txn.StagedTable()
		if err != nil {
			return fmt.Errorf("staged schema: %w", err)
		}
		id = staged.Schema().ID
	}
	if err := txn.SetProperties(iceberg.Properties{schemaProp(tv.Version): strconv.Itoa(id)}); err != nil {
		return fmt.Errorf("record schema of version %d: %w", tv.Version, err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		return err
	}
	p.log.Info("iceberg schema updated", "table", strings.Join(tbl.Identifier(), "."), "schema_version", tv.Version, "schema_id", id, "changed", e.changed)
	return nil
}

// evolver turns the difference between the table's schema and a
// version's columns into schema update operations, matching columns by
// name at every level, or by the rename the version's DDL made.
type evolver struct {
	u *table.UpdateSchema
	// renames is TableVersion.Renames, applied at every level: the
	// before_image struct has the table's columns too.
	renames map[string]string
	changed bool
	err     error
}

func childPath(parent []string, name string) []string {
	return append(append([]string(nil), parent...), name)
}

func (e *evolver) structs(path []string, cur, want []iceberg.NestedField) {
	curByName := make(map[string]iceberg.NestedField, len(cur))
	for _, f := range cur {
		curByName[f.Name] = f
	}
	wanted := make(map[string]bool, len(want))
	for _, w := range want {
		wanted[w.Name] = true
	}
	for _, w := range want {
		p := childPath(path, w.Name)
		if old, ok := e.renamedFrom(w, curByName, wanted); ok {
			if same, ok := curByName[w.Name]; ok && same.ID != old.ID {
				// The column that had the new name was dropped by a
				// version the table never got (opened before a restart);
				// iceberg-go takes the name once it is gone.
				e.u.DeleteColumn(p)
			}
			// The update addresses the column by its old name.
			op := childPath(path, old.Name)
			e.u.RenameColumn(op, w.Name)
			e.changed = true
			wanted[old.Name] = true
			e.field(op, old, w)
			continue
		}
		c, ok := curByName[w.Name]
		if !ok {
			e.add(p, w)
			continue
		}
		e.field(p, c, w)
	}
	for _, c := range cur {
		if !wanted[c.Name] {
			e.u.DeleteColumn(childPath(path, c.Name))
			e.changed = true
		}
	}
}

// renamedFrom returns the current column that w renames: the one
// e.renames names for it (in any case), when the version drops it and its
// type becomes w's in place. A rename that changes the type beyond that
// is a new column, as without the rename.
func (e *evolver) renamedFrom(w iceberg.NestedField, cur map[string]iceberg.NestedField, wanted map[string]bool) (iceberg.NestedField, bool) {
	name, ok := e.renames[w.Name]
	if !ok {
		return iceberg.NestedField{}, false
	}
	c, ok := cur[name]
	if !ok {
		for n, f := range cur {
			if strings.EqualFold(n, name) {
				c, ok = f, true
				break
			}
		}
	}
	if !ok || wanted[c.Name] || !inPlace(c.Type, w.Type) {
		return iceberg.NestedField{}, false
	}
	return c, true
}

// inPlace reports whether field can change a column of type cur to type
// want without replacing it.
func inPlace(cur, want iceberg.Type) bool {
	switch ct := cur.(type) {
	case *iceberg.StructType:
		_, ok := want.(*iceberg.StructType)
		return ok
	case iceberg.PrimitiveType:
		wt, ok := want.(iceberg.PrimitiveType)
		return ok && (ct.Equals(wt) || promotes(wt, ct) || promotes(ct, wt))
	}
	return false
}

// add adds a column. It is optional whatever the source says: rows
// committed before it have no value for it.
func (e *evolver) add(path []string, w iceberg.NestedField) {
	e.u.AddColumn(path, w.Type, w.Doc, false, nil)
	e.changed = true
}

// replace drops a column whose type cannot change in place and adds a
// new one of the same name: the old values keep their field ID in the
// old files and snapshots, and no reader takes them for the new type.
func (e *evolver) replace(path []string, w iceberg.NestedField) {
	e.u.DeleteColumn(path)
	e.add(path, w)
}

func (e *evolver) field(path []string, c, w iceberg.NestedField) {
	var upd table.ColumnUpdate
	if c.Required && !w.Required {
		upd.Required = iceberg.Optional[bool]{Valid: true, Val: false}
	}
	switch ct := c.Type.(type) {
	case *iceberg.StructType:
		wt, ok := w.Type.(*iceberg.StructType)
		if !ok {
			e.replace(path, w)
			return
		}
		e.structs(path, ct.FieldList, wt.FieldList)
	case iceberg.PrimitiveType:
		wt, ok := w.Type.(iceberg.PrimitiveType)
		switch {
		case !ok:
			e.replace(path, w)
			return
		case ct.Equals(wt), promotes(wt, ct):
			// The same type, or a narrower one the column's type reads.
		case promotes(ct, wt):
			upd.FieldType = iceberg.Optional[iceberg.Type]{Valid: true, Val: wt}
		default:
			e.replace(path, w)
			return
		}
	default:
		// Lists and maps: element and value types are compared whole.
		if !c.Type.Equals(w.Type) && !sameShape(c.Type, w.Type) {
			e.replace(path, w)
			return
		}
	}
	if upd.Required.Valid || upd.FieldType.Valid {
		e.u.UpdateColumn(path, upd)
		e.changed = true
	}
}

// sameShape reports whether two types are equal but for field IDs.
func sameShape(a, b iceberg.Type) bool {
	switch at := a.(type) {
	case *iceberg.ListType:
		bt, ok := b.(*iceberg.ListType)
		return ok && at.ElementRequired == bt.ElementRequired && sameShape(at.Element, bt.Element)
	case *iceberg.MapType:
		bt, ok := b.(*iceberg.MapType)
		return ok && at.ValueRequired == bt.ValueRequired && sameShape(at.KeyType, bt.KeyType) && sameShape(at.ValueType, bt.ValueType)
	case *iceberg.StructType:
		bt, ok := b.(*iceberg.StructType)
		if !ok || len(at.FieldList) != len(bt.FieldList) {
			return false
		}
		for i := range at.FieldList {
			af, bf := at.FieldList[i], bt.FieldList[i]
			if af.Name != bf.Name || af.Required != bf.Required || !sameShape(af.Type, bf.Type) {
				return false
			}
		}
		return true
	}
	return a.Equals(b)
}

// promotes reports whether Iceberg promotes a column of type from to
// type to in place (the spec's allowed type promotions).
func promotes(from, to iceberg.PrimitiveType) bool {
	switch f := from.(type) {
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		t, ok := to.(iceberg.DecimalType)
		return ok && f.Scale() == t.Scale() && f.Precision() < t.Precision()
	}
	return false
}

// annotate returns sc with each field's Iceberg field ID from ice,
// matched by name, as PARQUET:field_id metadata; other metadata stays.
func annotate(sc *arrow.Schema, ice *iceberg.Schema) (*arrow.Schema, error) {
	fields := make([]arrow.Field, sc.NumFields())
	for i, f := range sc.Fields() {
		nf, ok := ice.FindFieldByName(f.Name)
		if !ok {
			return nil, fmt.Errorf("column %q is not in Iceberg schema %d", f.Name, ice.ID)
		}
		af, err := annotateField(f, nf.ID, nf.Type)
		if err != nil {
			return nil, err
		}
		fields[i] = af
	}
	md := sc.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

func annotateField(f arrow.Field, id int, t iceberg.Type) (arrow.Field, error) {
	keys, values := f.Metadata.Keys(), f.Metadata.Values()
	var k, v []string
	for i := range keys {
		if keys[i] != table.ArrowParquetFieldIDKey {
			k, v = append(k, keys[i]), append(v, values[i])
		}
	}
	f.Metadata = arrow.NewMetadata(append(k, table.ArrowParquetFieldIDKey), append(v, strconv.Itoa(id)))
	switch dt := f.Type.(type) {
	case *arrow.StructType:
		st, ok := t.(*iceberg.StructType)
		if !ok {
			return f, fmt.Errorf("column %q is a struct, Iceberg field %d is %s", f.Name, id, t)
		}
		children := make([]arrow.Field, dt.NumFields())
		for i, c := range dt.Fields() {
			var match *iceberg.NestedField
			for j := range st.FieldList {
				if st.FieldList[j].Name == c.Name {
					match = &st.FieldList[j]
				}
			}
			if match == nil {
				return f, fmt.Errorf("field %q of struct %q is not in Iceberg field %d", c.Name, f.Name, id)
			}
			ac, err := annotateField(c, match.ID, match.Type)
			if err != nil {
				return f, err
			}
			children[i] = ac
		}
		f.Type = arrow.StructOf(children...)
	case *arrow.ListType:
		lt, ok := t.(*iceberg.ListType)
		if !ok {
			return f, fmt.Errorf("column %q is a list, Iceberg field %d is %s", f.Name, id, t)
		}
		elem, err := annotateField(dt.ElemField(), lt.ElementID, lt.Element)
		if err != nil {
			return f, err
		}
		f.Type = arrow.ListOfField(elem)
	case *arrow.MapType:
		return f, fmt.Errorf("column %q: map columns are not written by the exporter", f.Name)
	}
	return f, nil
}
