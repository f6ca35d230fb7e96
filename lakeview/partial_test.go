package lakeview_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCurrentStateKeepsValuesPartialImagesDidNotSend: a column missing
// from a partial UPDATE keeps the last value that was sent (replaying the
// stream merges each after image into the row), an explicit null stays
// null, and nothing from before a DELETE leaks into a re-insert.
func TestCurrentStateKeepsValuesPartialImagesDidNotSend(t *testing.T) {
	lines := []string{
		`{"op_type":"OBJECT_METADATA","qual_table":"S.P","columns":{"ID":{"type":"number","null":false,"key":true},"A":{"type":"string","null":true,"key":false},"B":{"type":"string","null":true,"key":false}}}`,
		`{"qual_table":"S.P","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"1","after":{"ID":1,"A":"a1","B":"b1"}}`,
		`{"qual_table":"S.P","op_type":"UPDATE","op_ts":"2026-07-13T02:00:00Z","pos":"2","before":{"ID":1},"after":{"ID":1,"A":"a2"}}`,
		`{"qual_table":"S.P","op_type":"UPDATE","op_ts":"2026-07-13T03:00:00Z","pos":"3","before":{"ID":1},"after":{"ID":1,"B":null}}`,
		`{"qual_table":"S.P","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"4","after":{"ID":2,"A":"x","B":"y"}}`,
		`{"qual_table":"S.P","op_type":"DELETE","op_ts":"2026-07-13T04:00:00Z","pos":"5","before":{"ID":2}}`,
		`{"qual_table":"S.P","op_type":"INSERT","op_ts":"2026-07-13T05:00:00Z","pos":"6","after":{"ID":2,"A":"x2"}}`,
	}
	db := viewsOf(t, lines)
	got := query(t, db, `SELECT CAST(ID AS BIGINT), A, B FROM "S.P__current" ORDER BY ID`)
	// ID 1: A from the second change, B explicitly nulled by the third.
	// ID 2: re-inserted without B after a delete: B is not the old "y".
	equalLines(t, "current S.P", got, []string{"1|a2|NULL", "2|x2|NULL"})
	one := query(t, db, `SELECT A FROM "S.P__current" WHERE ID = 1`)
	equalLines(t, "A of 1", one, []string{"a2"})
}

// TestCurrentStateKeyChangeWithPartialImage: an UPDATE that changes the
// key and leaves columns out of its after image moves the row with the
// values its before image gives for them (the old key's changes are not
// in the new key's window); an explicit null in the after image stays
// null, and the old key is gone.
func TestCurrentStateKeyChangeWithPartialImage(t *testing.T) {
	lines := []string{
		`{"op_type":"OBJECT_METADATA","qual_table":"S.P","columns":{"ID":{"type":"number","null":false,"key":true},"A":{"type":"string","null":true,"key":false},"B":{"type":"string","null":true,"key":false},"C":{"type":"string","null":true,"key":false}}}`,
		`{"qual_table":"S.P","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"1","after":{"ID":1,"A":"a1","B":"b1","C":"c1"}}`,
		`{"qual_table":"S.P","op_type":"UPDATE","op_ts":"2026-07-13T02:00:00Z","pos":"2","before":{"ID":1,"A":"a1","B":"b1","C":"c1"},"after":{"ID":5,"A":"a2","C":null}}`,
		`{"qual_table":"S.P","op_type":"UPDATE","op_ts":"2026-07-13T03:00:00Z","pos":"3","before":{"ID":5},"after":{"ID":5,"A":"a3"}}`,
		`{"qual_table":"S.P","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"4","after":{"ID":2,"A":"x","B":"y","C":"z"}}`,
		`{"qual_table":"S.P","op_type":"UPDATE","op_ts":"2026-07-13T04:00:00Z","pos":"5","before":{"ID":2,"A":"x","B":"y","C":"z"},"after":{"ID":2,"A":"x2"}}`,
	}
	got := query(t, viewsOf(t, lines), `SELECT CAST(ID AS BIGINT), A, B, C FROM "S.P__current" ORDER BY ID`)
	// 5: A from its own later change, B from the move's before image, C
	// nulled by the move. 2: an update that kept its key carries as before.
	equalLines(t, "current S.P", got, []string{"2|x2|y|z", "5|a3|b1|NULL"})
}

// TestCurrentStateAfterAKeyColumnRename: rows written before a DDL renamed
// the key column keep their keys in the current state (read through the
// former name), so they neither collapse into one row nor lose later
// changes made under the new name.
func TestCurrentStateAfterAKeyColumnRename(t *testing.T) {
	lines := []string{
		`{"op_type":"OBJECT_METADATA","qual_table":"S.K","columns":{"ID":{"type":"number","null":false,"key":true},"A":{"type":"string","null":true,"key":false}}}`,
		`{"qual_table":"S.K","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"1","after":{"ID":1,"A":"one"}}`,
		`{"qual_table":"S.K","op_type":"INSERT","op_ts":"2026-07-13T01:00:01Z","pos":"2","after":{"ID":2,"A":"two"}}`,
		`{"qual_table":"S.K","op_type":"INSERT","op_ts":"2026-07-13T01:00:02Z","pos":"3","after":{"ID":4,"A":"four"}}`,
		`{"op_type":"DDL","op_ts":"2026-07-13T02:00:00Z","pos":"4","ddl":{"object":{"catalog":"","schema":"S","object":"K"},"statement":"ALTER TABLE S.K RENAME COLUMN ID TO KID"}}`,
		`{"qual_table":"S.K","op_type":"UPDATE","op_ts":"2026-07-13T03:00:00Z","pos":"5","before":{"KID":1,"A":"one"},"after":{"KID":1,"A":"one-b"}}`,
		`{"qual_table":"S.K","op_type":"INSERT","op_ts":"2026-07-13T03:00:01Z","pos":"6","after":{"KID":3,"A":"three"}}`,
		`{"qual_table":"S.K","op_type":"DELETE","op_ts":"2026-07-13T03:00:02Z","pos":"7","before":{"KID":4,"A":"four"}}`,
	}
	got := query(t, viewsOf(t, lines), `SELECT CAST(KID AS BIGINT), A FROM "S.K__current" ORDER BY KID`)
	equalLines(t, "current S.K", got, []string{"1|one-b", "2|two", "3|three"})
}

// TestCurrentStateKeyRenameOntoReusedNames: a key renamed onto the name
// of a column dropped before reads each version's files by the name they
// give the key (not the dropped column's values), and a column added
// under the key's former name has no value from the versions where that
// name was the key.
func TestCurrentStateKeyRenameOntoReusedNames(t *testing.T) {
	ddl := func(pos, stmt string) string {
		return `{"op_type":"DDL","op_ts":"2026-07-13T02:00:0` + pos + `Z","pos":"` + pos + `","ddl":{"object":{"catalog":"","schema":"S","object":"K"},"statement":"ALTER TABLE S.K ` + stmt + `"}}`
	}
	onto := []string{
		`{"op_type":"OBJECT_METADATA","qual_table":"S.K","columns":{"ID":{"type":"number","null":false,"key":true},"KID":{"type":"number","null":true,"key":false},"A":{"type":"string","null":true,"key":false}}}`,
		`{"qual_table":"S.K","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"1","after":{"ID":1,"KID":100,"A":"one"}}`,
		`{"qual_table":"S.K","op_type":"INSERT","op_ts":"2026-07-13T01:00:01Z","pos":"2","after":{"ID":2,"KID":200,"A":"two"}}`,
		ddl("3", "DROP COLUMN KID"),
		ddl("4", "RENAME COLUMN ID TO KID"),
		`{"qual_table":"S.K","op_type":"INSERT","op_ts":"2026-07-13T03:00:00Z","pos":"5","after":{"KID":3,"A":"three"}}`,
	}
	got := query(t, viewsOf(t, onto), `SELECT CAST(KID AS BIGINT), A FROM "S.K__current" ORDER BY KID`)
	equalLines(t, "key renamed onto a dropped column's name", got, []string{"1|one", "2|two", "3|three"})

	readded := []string{
		`{"op_type":"OBJECT_METADATA","qual_table":"S.K","columns":{"ID":{"type":"number","null":false,"key":true},"A":{"type":"string","null":true,"key":false}}}`,
		`{"qual_table":"S.K","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"1","after":{"ID":1,"A":"one"}}`,
		ddl("2", "RENAME COLUMN ID TO KID"),
		ddl("3", "ADD ID NUMBER"),
		`{"qual_table":"S.K","op_type":"UPDATE","op_ts":"2026-07-13T03:00:00Z","pos":"4","before":{"KID":1},"after":{"KID":1,"A":"one-b"}}`,
	}
	got = query(t, viewsOf(t, readded), `SELECT CAST(KID AS BIGINT), CAST(ID AS BIGINT), A FROM "S.K__current" ORDER BY KID`)
	equalLines(t, "a column added under the key's former name", got, []string{"1|NULL|one-b"})
}

// TestCurrentStateColumnsNamedLikeItsAliases: columns named as the view's
// own subquery (NUMBERED) and carry field (V) read their values, not the
// subquery's.
func TestCurrentStateColumnsNamedLikeItsAliases(t *testing.T) {
	lines := []string{
		`{"op_type":"OBJECT_METADATA","qual_table":"S.P","columns":{"ID":{"type":"number","null":false,"key":true},"NUMBERED":{"type":"string","null":true,"key":false},"V":{"type":"string","null":true,"key":false}}}`,
		`{"qual_table":"S.P","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"1","after":{"ID":1,"NUMBERED":"n1","V":"v1"}}`,
		`{"qual_table":"S.P","op_type":"UPDATE","op_ts":"2026-07-13T02:00:00Z","pos":"2","before":{"ID":1},"after":{"ID":1,"NUMBERED":"n2"}}`,
	}
	got := query(t, viewsOf(t, lines), `SELECT CAST(ID AS BIGINT), CAST("NUMBERED" AS VARCHAR), CAST("V" AS VARCHAR) FROM "S.P__current" ORDER BY ID`)
	equalLines(t, "current S.P", got, []string{"1|n2|v1"})
}

// viewsOf exports the stream lines and returns a DuckDB with the lake's
// generated views.
func viewsOf(t *testing.T, lines []string) *sql.DB {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st := export(t, dir, in)
	db := openDuck(t)
	generateAndRun(t, db, st, dir)
	return db
}
