package pipeline_test

import (
	"fmt"
	"strings"
	"testing"
)

// The versions a schema record opens after held DML: a rerun over the
// grown input (as after a crash, or the next scheduled run) skips the held
// rows as durable before they could be held again, and must still build
// the versions one uninterrupted run builds, each data file matching its
// version's _schemas document.

func rerunMeta(table string) string {
	return `{"op_type":"OBJECT_METADATA","qual_table":"` + table + `","columns":{"ID":{"type":"number","null":false,"key":true},"AMT":{"type":"number","null":true,"key":false}}}`
}

func rerunSchema(table string) string {
	return `{"$schema":"http://json-schema.org/draft-04/schema#","id":"` + table + `","type":"object","definitions":{"row":{"type":"object","properties":{"ID":{"type":"integer"},"AMT":{"type":["number","null"],"multipleOf":0.01}}}},"properties":{"after":{"$ref":"#/definitions/row"},"before":{"$ref":"#/definitions/row"}}}`
}

func rerunInsert(table string, pos int, id, amt string) string {
	return fmt.Sprintf(`{"qual_table":"%s","op_type":"INSERT","op_ts":"2026-07-13T04:00:%02dZ","xid":"x","pos":"p%d","after":{"ID":%s,"AMT":%s}}`, table, pos, pos, id, amt)
}

// rerunMatchesOneRun exports lines, then lines+more into one sink, and
// lines+more at once into another, and compares table's rows, versions
// and types, and the files against their _schemas documents.
func rerunMatchesOneRun(t *testing.T, table string, lines, more []string) {
	t.Helper()
	in := t.TempDir()
	p := writeFile(t, in, "in.jsonl", strings.Join(lines, "\n")+"\n")
	rerun := t.TempDir()
	if _, err := export(t, rerun, nil, p); err != nil {
		t.Fatal(err)
	}
	all := append(append([]string{}, lines...), more...)
	writeFile(t, in, "in.jsonl", strings.Join(all, "\n")+"\n")
	once := t.TempDir()
	for _, run := range []struct {
		dir, path string
	}{{rerun, p}, {once, writeFile(t, t.TempDir(), "in.jsonl", strings.Join(all, "\n")+"\n")}} {
		if sum, err := export(t, run.dir, nil, run.path); err != nil || sum.Rejected != 0 {
			t.Fatalf("%v, %d rejected: %v", err, sum.Rejected, readDLQ(t, run.dir))
		}
	}
	rows := func(dir string) []string {
		// Each file on its own: read together, DuckDB unions BIGINT with
		// an earlier version's DOUBLE.
		return rowStrings(query(t, openDuck(t), `SELECT regexp_extract(filename, 'schema_version=([0-9]+)', 1), ID::VARCHAR, typeof(ID) FROM read_parquet('`+dir+`/`+table+`/*/*/*.parquet', filename=true, union_by_name=false) ORDER BY 1, 2`))
	}
	equalLines(t, "rows (version, ID, type): rerun against one run", rows(rerun), rows(once))
	for _, dir := range []string{rerun, once} {
		checkFilesMatchSchemas(t, dir, table, schemaFields(t, dir, table))
	}
}

// DML held for a table's first metadata is released under v1; the schema
// record that follows opens v2.
func TestRerunAfterDMLHeldForMetadataAndASchemaRecord(t *testing.T) {
	rerunMatchesOneRun(t, "S.H", []string{
		rerunInsert("S.H", 1, "1", "0.5"), // held: no metadata yet
		rerunMeta("S.H"),
		rerunSchema("S.H"),
		rerunInsert("S.H", 2, "9007199254740993", "1.25"),
	}, []string{rerunInsert("S.H", 3, "3", "2.5")})
}

// The same through a DDL that is not understood: DML held for the refresh
// is released under the completed version, and the schema record that
// follows opens the next.
func TestRerunAfterDMLHeldForARefreshAndASchemaRecord(t *testing.T) {
	ddl := `{"op_type":"DDL","op_ts":"2026-07-13T04:00:01Z","pos":"d1","ddl":{"object":{"catalog":"","schema":"S","object":"D"},"statement":"ALTER TABLE S.D SOMETHING UNPARSEABLE"}}`
	rerunMatchesOneRun(t, "S.D", []string{
		rerunMeta("S.D"), rerunInsert("S.D", 1, "1", "0.5"),
		ddl,
		rerunInsert("S.D", 2, "2", "0.5"), // held for the refresh
		rerunMeta("S.D"),
		rerunSchema("S.D"),
		rerunInsert("S.D", 3, "9007199254740993", "1.25"),
	}, []string{rerunInsert("S.D", 4, "4", "2.5")})
}
