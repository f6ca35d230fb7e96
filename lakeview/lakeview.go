// Package lakeview writes SQL that lets query engines read the lake: for
// each table a view over all its schema versions and a view of its current
// state (the latest row image per key, deleted keys removed).
//
// It reads only the schema registry (_schemas/{table}/v{N}.json); the
// engine reads the data files itself, from root.
package lakeview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
)

// Store is the part of store.Store that lakeview needs; store.Local and
// store.S3 satisfy it.
type Store interface {
	// List returns the keys under prefix.
	List(ctx context.Context, prefix string) ([]string, error)
	// Get reads an object.
	Get(ctx context.Context, key string) ([]byte, error)
}

// Dialects Generate knows.
const (
	DuckDB = "duckdb"
	Spark  = "spark"
)

// Names of the exporter's metacolumns the views use.
const (
	colOpType        = "op_type"
	colOpTS          = "op_ts"
	colSrcPartition  = "src_partition"
	colSrcOffset     = "src_offset"
	colBeforeImage   = "before_image"
	colAbsentCols    = "absent_columns"
	colSchemaVersion = "schema_version" // the folder key, a column of the all-versions view
)

// Table is one table of the lake as the schema registry describes it.
type Table struct {
	Name     string   // the qualified source name, e.g. SALES.ORDERS
	Segment  string   // its folder: partition.TableSegment(Name)
	Versions []int    // schema versions, ascending
	Columns  []Column // union of the versions' columns, in first-seen order
	// BeforeImage is true when some version's files carry before_image.
	BeforeImage bool
	// SourceOrder is true when some version's files carry src_partition
	// and src_offset (lakes written before they existed do not).
	SourceOrder bool
	// AbsentColumns is true when the files list the columns missing from
	// partial images.
	AbsentColumns bool
	// KeyNames are, for a key column that a version's DDL renamed (RENAME
	// COLUMN), the name that holds its values in the files of each
	// earlier version, by schema version (the versions where the column
	// has its own name are not listed).
	KeyNames map[string]map[int]string
}

// Column is one source column of a table.
type Column struct {
	Name string
	// Key is the column's key flag in the newest version (false for a
	// column the newest version no longer has).
	Key bool
	// Type is the lake type chosen in the newest version that has it.
	Type string
	// Versions lists the schema versions that have the column.
	Versions []int
}

// Keys returns the names of the key columns.
func (t *Table) Keys() []string {
	var out []string
	for _, c := range t.Columns {
		if c.Key {
			out = append(out, c.Name)
		}
	}
	return out
}

// VersionDoc is the part of a _schemas/{table}/v{N}.json document that
// readers of the lake use.
type VersionDoc struct {
	Table       string `json:"table"`
	Version     int    `json:"schema_version"`
	DDL         string `json:"ddl"`
	OpenedAtPos string `json:"opened_at_pos"`
	Fields      []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Nullable bool   `json:"nullable"`
	} `json:"arrow_schema"`
	Columns []struct {
		Name     string `json:"name"`
		Key      bool   `json:"key"`
		Type     string `json:"type"`
		Nullable bool   `json:"nullable"`
		TypeFrom string `json:"type_from"`
	} `json:"columns"`
}

// ReadRegistry reads every schema document of the lake, by table name,
// versions ascending. A document that disagrees with its folder or file
// name is an error.
func ReadRegistry(ctx context.Context, st Store) (map[string][]VersionDoc, error) {
	bySeg, err := readRegistry(ctx, st)
	if err != nil {
		return nil, err
	}
	out := map[string][]VersionDoc{}
	for seg, docs := range bySeg {
		name, err := partition.ParseTableSegment(seg)
		if err != nil {
			return nil, fmt.Errorf("schema registry folder %q: %w", seg, err)
		}
		for _, d := range docs {
			out[name] = append(out[name], d.doc)
		}
	}
	return out, nil
}

type docAt struct {
	version int
	doc     VersionDoc
}

func readRegistry(ctx context.Context, st Store) (map[string][]docAt, error) {
	keys, err := st.List(ctx, "_schemas/")
	if err != nil {
		return nil, fmt.Errorf("list schema registry: %w", err)
	}
	bySeg := map[string][]docAt{}
	for _, key := range keys {
		seg, version, ok := parseSchemaKey(key)
		if !ok {
			continue // not a schema document (a stray or temporary file)
		}
		data, err := st.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		var d VersionDoc
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if d.Version != version {
			return nil, fmt.Errorf("%s: schema_version is %d, the file name says %d", key, d.Version, version)
		}
		bySeg[seg] = append(bySeg[seg], docAt{version, d})
	}
	for seg := range bySeg {
		docs := bySeg[seg]
		sort.Slice(docs, func(i, j int) bool { return docs[i].version < docs[j].version })
	}
	return bySeg, nil
}

// Tables reads the schema registry of the lake in st and describes every
// table, sorted by name.
func Tables(ctx context.Context, st Store) ([]Table, error) {
	bySeg, err := readRegistry(ctx, st)
	if err != nil {
		return nil, err
	}
	var tables []Table
	for seg, docs := range bySeg {
		name, err := partition.ParseTableSegment(seg)
		if err != nil {
			return nil, fmt.Errorf("schema registry folder %q: %w", seg, err)
		}
		t := Table{Name: name, Segment: seg}
		index := map[string]int{}
		for _, d := range docs {
			if d.doc.Table != "" && d.doc.Table != name {
				return nil, fmt.Errorf("_schemas/%s/v%d.json names table %q, its folder names %q", seg, d.version, d.doc.Table, name)
			}
			t.Versions = append(t.Versions, d.version)
			for _, f := range d.doc.Fields {
				switch f.Name {
				case colBeforeImage:
					t.BeforeImage = true
				case colSrcOffset:
					t.SourceOrder = true
				case colAbsentCols:
					t.AbsentColumns = true
				}
			}
			for _, c := range d.doc.Columns {
				i, seen := index[c.Name]
				if !seen {
					i = len(t.Columns)
					index[c.Name] = i
					t.Columns = append(t.Columns, Column{Name: c.Name})
				}
				t.Columns[i].Type = c.Type
				t.Columns[i].Versions = append(t.Columns[i].Versions, d.version)
			}
		}
		// key flags come from the newest version alone
		newest := docs[len(docs)-1].doc
		for _, c := range newest.Columns {
			t.Columns[index[c.Name]].Key = c.Key
			if c.Key {
				if names := versionNames(docs, c.Name); names != nil {
					if t.KeyNames == nil {
						t.KeyNames = map[string]map[int]string{}
					}
					t.KeyNames[c.Name] = names
				}
			}
		}
		tables = append(tables, t)
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].Name < tables[j].Name })
	return tables, nil
}

// versionNames follows the RENAME COLUMN statements of the versions' DDL
// back from the newest version: the name column had in each older
// version whose name for it differs (Table.KeyNames), or nil.
func versionNames(docs []docAt, column string) map[int]string {
	var out map[int]string
	name := column
	for i := len(docs) - 1; i > 0; i-- {
		for _, a := range arrowschema.ParseDDL(docs[i].doc.DDL).Alters {
			if a.Kind == arrowschema.AlterRename && strings.EqualFold(a.NewName, name) {
				name = docNamed(docs[i-1].doc, a.Column.Name)
			}
		}
		if name != column {
			if out == nil {
				out = map[int]string{}
			}
			out[docs[i-1].version] = name
		}
	}
	return out
}

// docNamed is the column of d named name, in any case, or name.
func docNamed(d VersionDoc, name string) string {
	for _, c := range d.Columns {
		if c.Name == name {
			return name
		}
	}
	for _, c := range d.Columns {
		if strings.EqualFold(c.Name, name) {
			return c.Name
		}
	}
	return name
}

// parseSchemaKey splits "_schemas/{segment}/v{N}.json".
func parseSchemaKey(key string) (seg string, version int, ok bool) {
	rest, ok := strings.CutPrefix(key, "_schemas/")
	if !ok {
		return "", 0, false
	}
	seg, file, ok := strings.Cut(rest, "/")
	if !ok || seg == "" || strings.Contains(file, "/") {
		return "", 0, false
	}
	num, ok := strings.CutPrefix(file, "v")
	if !ok {
		return "", 0, false
	}
	num, ok = strings.CutSuffix(num, ".json")
	if !ok || num == "" || num[0] == '0' || strings.TrimLeft(num, "0123456789") != "" {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return seg, n, true
}

// Generate writes the SQL script for dialect ("duckdb" or "spark") that
// defines, for every table of the lake in st, a view over all its schema
// versions and a current-state view "{table}__current". root is where the
// engine finds the sink: a local path or s3://bucket/prefix. Each
// statement ends with ";\n".
func Generate(ctx context.Context, st Store, root, dialect string) (string, error) {
	var d sqlDialect
	switch dialect {
	case DuckDB:
		d = duckDialect{}
	case Spark:
		d = sparkDialect{}
	default:
		return "", fmt.Errorf("unknown SQL dialect %q (want %s or %s)", dialect, DuckDB, Spark)
	}
	root = strings.TrimRight(root, "/")
	if root == "" {
		return "", errors.New("empty lake root")
	}
	if strings.ContainsRune(root, 0) {
		return "", errors.New("lake root contains a NUL byte")
	}
	tables, err := Tables(ctx, st)
	if err != nil {
		return "", err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "-- Views over the lakehouse-exporter lake at %s (%s dialect), generated by lakeview.\n", commentText(root), dialect)
	b.WriteString("-- Per table: a view of every row change over all schema versions (columns united by name,\n")
	b.WriteString("-- missing ones NULL) and {table}__current, the latest row image per key with deleted keys removed.\n")
	b.WriteString("-- With partial images (absent_columns), each column comes from the latest change that carried it.\n")
	if len(tables) == 0 {
		b.WriteString("-- The schema registry (_schemas/) is empty: no tables.\n")
	}

	// Engines compare unquoted-equivalent names case-insensitively
	// (DuckDB even quoted ones), so two view names that differ only in
	// case would replace each other.
	taken := map[string]string{}
	claim := func(view string) (string, bool) {
		k := strings.ToLower(view)
		if other, ok := taken[k]; ok {
			return other, false
		}
		taken[k] = view
		return "", true
	}

	for i := range tables {
		t := &tables[i]
		fmt.Fprintf(&b, "\n-- %s: schema versions %s, folder %s\n", commentText(t.Name), intList(t.Versions), commentText(t.Segment))
		if bad := nulName(t); bad != "" {
			fmt.Fprintf(&b, "-- %s contains a NUL byte, which SQL cannot name: no views.\n", commentText(bad))
			continue
		}
		if other, ok := claim(t.Name); !ok {
			fmt.Fprintf(&b, "-- The view name %s collides with %s (names compare case-insensitively): no views.\n", commentText(t.Name), commentText(other))
			continue
		}
		b.WriteString(d.allView(t, root))
		b.WriteString(";\n")

		keys := t.Keys()
		current := t.Name + "__current"
		switch {
		case len(keys) == 0:
			fmt.Fprintf(&b, "-- No current-state view can be built for %s: its newest schema version has no key columns.\n", commentText(t.Name))
		default:
			if other, ok := claim(current); !ok {
				fmt.Fprintf(&b, "-- The view name %s collides with %s (names compare case-insensitively): no current-state view.\n", commentText(current), commentText(other))
				continue
			}
			if !t.BeforeImage {
				b.WriteString("-- The files have no before_image: an UPDATE that changes the key leaves the old key in place.\n")
			}
			if !t.SourceOrder {
				b.WriteString("-- The files have no src_partition/src_offset: changes with the same op_ts are in no defined order.\n")
			}
			b.WriteString(currentView(d, t, current))
			b.WriteString(";\n")
		}
	}
	return b.String(), nil
}

// sqlDialect is what differs between engines.
type sqlDialect interface {
	ident(name string) string
	literal(s string) string
	// allView is the statement (without ";") of the view over every
	// version of t.
	allView(t *Table, root string) string
	// createView starts a view definition.
	createView(name string) string
	// distinct is a null-safe "a differs from b".
	distinct(a, b string) string
	// sent wraps column col of a change in a struct {v}, or, when the
	// change did not carry it (a partial image), absent (an expression
	// that is such a struct or NULL for "not sent"); a DELETE carries
	// every column as NULL, so nothing from before it leaks into a
	// re-insert.
	sent(col, name, absent string) string
	// wrap is the struct {v} of expr.
	wrap(expr string) string
	// lastSent is the last non-NULL value of expr over window w.
	lastSent(expr, w string) string
}

type duckDialect struct{}

func (duckDialect) ident(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
func (duckDialect) literal(s string) string  { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
func (d duckDialect) createView(name string) string {
	return "CREATE OR REPLACE VIEW " + d.ident(name) + " AS"
}
func (d duckDialect) allView(t *Table, root string) string {
	return d.createView(t.Name) + " SELECT * FROM read_parquet(" + d.literal(root+"/"+t.Segment+"/**/*.parquet") +
		", hive_partitioning = true, union_by_name = true)"
}
func (duckDialect) distinct(a, b string) string { return a + " IS DISTINCT FROM " + b }
func (d duckDialect) sent(col, name, absent string) string {
	return fmt.Sprintf("CASE WHEN %s = 'DELETE' THEN {'v': NULL} WHEN list_contains(coalesce(%s, []), %s) THEN %s ELSE {'v': %s} END",
		colOpType, colAbsentCols, d.literal(name), absent, col)
}
func (duckDialect) wrap(expr string) string { return "{'v': " + expr + "}" }
func (duckDialect) lastSent(expr, w string) string {
	return "last_value(" + expr + " IGNORE NULLS) OVER " + w
}

type sparkDialect struct{}

func (sparkDialect) ident(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// literal escapes with backslashes. Doubling a quote does not work in
// Spark SQL: it reads a doubled quote as the end of one literal and the
// start of an adjacent one, and joins the two without the quote.
func (sparkDialect) literal(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	s = strings.ReplaceAll(s, "\r", `\r`)
	return `'` + s + `'`
}
func (d sparkDialect) createView(name string) string {
	return "CREATE OR REPLACE TEMPORARY VIEW " + d.ident(name) + " AS"
}
func (d sparkDialect) allView(t *Table, root string) string {
	// Hive partition discovery (schema_version=, dt=) needs the table
	// folder as the path and no recursive file lookup. Dates and
	// timestamps are proleptic Gregorian: Spark 3.2 to 3.5 refuse those
	// before 1582-10-15 in files Spark did not write unless told so
	// (Spark 4 reads them so by default; older ones ignore the option).
	return "CREATE OR REPLACE TEMPORARY VIEW " + d.ident(t.Name) + " USING parquet OPTIONS (path " +
		d.literal(root+"/"+t.Segment) + ", mergeSchema 'true', recursiveFileLookup 'false', datetimeRebaseMode 'CORRECTED')"
}
func (sparkDialect) distinct(a, b string) string { return "NOT (" + a + " <=> " + b + ")" }
func (d sparkDialect) sent(col, name, absent string) string {
	return fmt.Sprintf("CASE WHEN %s = 'DELETE' THEN named_struct('v', NULL) WHEN array_contains(coalesce(%s, array()), %s) THEN %s ELSE named_struct('v', %s) END",
		colOpType, colAbsentCols, d.literal(name), absent, col)
}
func (sparkDialect) wrap(expr string) string        { return "named_struct('v', " + expr + ")" }
func (sparkDialect) lastSent(expr, w string) string { return "last(" + expr + ", true) OVER " + w }

// currentView is the statement (without ";") of the current-state view:
// every row change, plus a tombstone for the old key of each UPDATE that
// changed the key, numbered per key from the newest; the newest is kept
// unless it is a DELETE.
func currentView(d sqlDialect, t *Table, name string) string {
	// A key column a DDL renamed holds older rows' values under other
	// names, which may be other columns' in other versions: each
	// version's files are read through the name they give it. A column
	// whose name was a key's in some versions has no value there.
	byVersion := func(expr func(name string) string, names map[int]string, own string) string {
		groups := map[string][]int{}
		for v, n := range names {
			groups[n] = append(groups[n], v)
		}
		order := make([]string, 0, len(groups))
		for n := range groups {
			order = append(order, n)
		}
		sort.Strings(order)
		var b strings.Builder
		b.WriteString("CASE")
		for _, n := range order {
			vs := groups[n]
			sort.Ints(vs)
			then := "NULL"
			if n != "" {
				then = expr(n)
			}
			fmt.Fprintf(&b, " WHEN %s IN (%s) THEN %s", colSchemaVersion, intList(vs), then)
		}
		fmt.Fprintf(&b, " ELSE %s END", expr(own))
		return b.String()
	}
	key := func(prefix, name string) string {
		expr := func(n string) string { return prefix + d.ident(n) }
		if names := t.KeyNames[name]; len(names) > 0 {
			return byVersion(expr, names, name)
		}
		return expr(name)
	}
	keyElsewhere := map[string]map[int]string{} // a column name → the versions where a key had it
	for k, names := range t.KeyNames {
		for v, n := range names {
			if n != k {
				if keyElsewhere[n] == nil {
					keyElsewhere[n] = map[int]string{}
				}
				keyElsewhere[n][v] = ""
			}
		}
	}
	taken := map[string]bool{}
	var cols []string
	for _, c := range t.Columns {
		switch {
		case c.Key:
			cols = append(cols, key("", c.Name)+" AS "+d.ident(c.Name))
		case len(keyElsewhere[c.Name]) > 0:
			cols = append(cols, byVersion(func(n string) string { return d.ident(n) }, keyElsewhere[c.Name], c.Name)+" AS "+d.ident(c.Name))
		default:
			cols = append(cols, d.ident(c.Name))
		}
		taken[strings.ToLower(c.Name)] = true
	}
	rn := "__lakeview_rn"
	for taken[rn] {
		rn = "_" + rn
	}
	meta := []string{colOpType, colOpTS}
	order := []string{colOpTS}
	if t.SourceOrder {
		meta = append(meta, colSrcPartition, colSrcOffset)
		order = append(order, colSrcPartition, colSrcOffset)
	}
	desc := make([]string, len(order))
	for i, o := range order {
		desc[i] = o + " DESC"
	}
	var keys []string
	for _, k := range t.Keys() {
		keys = append(keys, d.ident(k))
	}
	colList := strings.Join(cols, ", ")
	carry := t.AbsentColumns
	inner := append([]string(nil), meta...)
	if carry {
		inner = append(inner, colAbsentCols)
	}
	// An UPDATE that changed the key starts the new key's window: a
	// column its partial after image left out did not change, so it is
	// the before image's value when that carries one (the old key's
	// changes are not in the new key's window to carry it from).
	var moved string
	if carry && t.BeforeImage {
		inner = append(inner, colBeforeImage)
		if len(t.KeyNames) > 0 {
			inner = append(inner, colSchemaVersion) // moved reads the key's before image by version
		}
		var differs, present []string
		for _, c := range t.Columns {
			if c.Key {
				differs = append(differs, d.distinct(key(colBeforeImage+".", c.Name), d.ident(c.Name)))
				present = append(present, key(colBeforeImage+".", c.Name)+" IS NOT NULL")
			}
		}
		moved = fmt.Sprintf("%s = 'UPDATE' AND (%s) AND (%s)", colOpType, strings.Join(present, " OR "), strings.Join(differs, " OR "))
	}

	// With partial images, each column comes from the latest change that
	// carried it; otherwise the latest change's image is the row.
	var outer, mid []string
	for _, c := range t.Columns {
		id := d.ident(c.Name)
		switch {
		case c.Key || !carry:
			outer = append(outer, id)
			mid = append(mid, id)
		default:
			// Qualified: a column named like the subquery (NUMBERED)
			// would otherwise be read as it.
			outer = append(outer, "numbered."+id+".v AS "+id)
			absent := "NULL"
			if moved != "" {
				before := colBeforeImage + "." + id
				absent = fmt.Sprintf("CASE WHEN %s AND %s IS NOT NULL THEN %s END", moved, before, d.wrap(before))
			}
			mid = append(mid, d.lastSent(d.sent(id, c.Name, absent), "w")+" AS "+id)
		}
	}

	var b strings.Builder
	b.WriteString(d.createView(name) + "\n")
	fmt.Fprintf(&b, "SELECT %s\nFROM (\n", strings.Join(outer, ", "))
	fmt.Fprintf(&b, "  SELECT %s, %s,\n", strings.Join(mid, ", "), colOpType)
	fmt.Fprintf(&b, "    ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s) AS %s\n", strings.Join(keys, ", "), strings.Join(desc, ", "), rn)
	b.WriteString("  FROM (\n")
	fmt.Fprintf(&b, "    SELECT %s, %s FROM %s\n", colList, strings.Join(inner, ", "), d.ident(t.Name))
	if t.BeforeImage {
		// The old key of an UPDATE that changed it is deleted at the
		// update's position in the stream.
		var sel, differs, present []string
		for _, c := range t.Columns {
			if c.Key {
				sel = append(sel, key(colBeforeImage+".", c.Name)+" AS "+d.ident(c.Name))
				differs = append(differs, d.distinct(key(colBeforeImage+".", c.Name), key("", c.Name)))
				present = append(present, key(colBeforeImage+".", c.Name)+" IS NOT NULL")
			} else {
				sel = append(sel, "NULL AS "+d.ident(c.Name))
			}
		}
		tombMeta := []string{"'DELETE' AS " + colOpType, colOpTS}
		if t.SourceOrder {
			tombMeta = append(tombMeta, colSrcPartition, colSrcOffset)
		}
		if carry {
			tombMeta = append(tombMeta, "NULL AS "+colAbsentCols, colBeforeImage)
			if len(t.KeyNames) > 0 {
				tombMeta = append(tombMeta, colSchemaVersion)
			}
		}
		b.WriteString("    UNION ALL\n")
		fmt.Fprintf(&b, "    SELECT %s, %s FROM %s\n", strings.Join(sel, ", "), strings.Join(tombMeta, ", "), d.ident(t.Name))
		fmt.Fprintf(&b, "    WHERE %s = 'UPDATE' AND (%s)\n", colOpType, strings.Join(present, " OR "))
		fmt.Fprintf(&b, "      AND (%s)\n", strings.Join(differs, " OR "))
	}
	b.WriteString("  ) AS changes\n")
	if carry {
		fmt.Fprintf(&b, "  WINDOW w AS (PARTITION BY %s ORDER BY %s ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)\n",
			strings.Join(keys, ", "), strings.Join(order, ", "))
	}
	fmt.Fprintf(&b, ") AS numbered\nWHERE %s = 1 AND %s <> 'DELETE'", rn, colOpType)
	return b.String()
}

// commentText renders s for a "--" comment: quoted with Go escapes when it
// has anything but printable ASCII, so no name can end the comment, or a
// backslash, which at the end of a line continues a Spark SQL comment onto
// the next.
func commentText(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f || s[i] == '\\' {
			return strconv.Quote(s)
		}
	}
	return s
}

func nulName(t *Table) string {
	if strings.ContainsRune(t.Name, 0) {
		return t.Name
	}
	for _, c := range t.Columns {
		if strings.ContainsRune(c.Name, 0) {
			return c.Name
		}
	}
	return ""
}

func intList(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
