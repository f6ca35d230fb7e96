package arrowschema

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// A catalog restored from its Snapshot (as a Kafka checkpoint carries it)
// at any step of a random sequence of metadata, DDL (understood, not
// understood, changing no column), schema records (re-sent, without
// columns) and DML, then given the rest of the same records, builds the
// same versions (numbers, columns, provisional, hold, written) and the
// same events as the catalog that was never restored. Written from a
// review that found the restore rebuilt a provisional version with the
// types of a schema record that came after its DDL.

type restorePropOp struct {
	kind  string // md, ddl, schema, dml
	table string
	arg   int
	id    string
}

var restorePropTables = []string{"S.A", "S.B"}

func restorePropMD(table string, variant int) cdc.TableMetadata {
	cols := []cdc.Column{
		{Name: "ID", Type: "number", Nullable: false, Key: true},
		{Name: "AMT", Type: "number", Nullable: true},
	}
	if variant == 1 {
		cols = append(cols, cdc.Column{Name: "NOTE", Type: "string", Nullable: true})
	}
	return cdc.TableMetadata{Table: table, Columns: cols}
}

func restorePropDDL(table string, variant int) string {
	switch variant {
	case 0:
		return "ALTER TABLE " + table + " ADD (NOTE VARCHAR2(10))"
	case 1:
		return "ALTER TABLE " + table + " SOMETHING UNPARSEABLE"
	default:
		return "ALTER TABLE " + table + " ENABLE ROW MOVEMENT"
	}
}

func restorePropSchema(id string, variant int) []byte {
	var props string
	switch variant {
	case 0:
		props = `"ID":{"type":"integer"}`
	case 1:
		props = `"ID":{"type":"string"}`
	case 2:
		props = `"ID":{"type":"integer"},"AMT":{"type":["number","null"],"multipleOf":0.01}`
	case 3: // re-sent without columns
		return []byte(`{"id":"` + id + `","type":"object","properties":{"op_type":{"type":"string"}}}`)
	case 4:
		props = `"ID":{"type":"integer"},"NOTE":{"type":["string","null"],"maxLength":10}`
	}
	return []byte(`{"id":"` + id + `","type":"object","properties":{"after":{"type":"object","properties":{` + props + `}}}}`)
}

var restorePropIDs = []string{"S.A", "S.B", "PDB1.S.A", "PDB1.S.B"}

func restorePropRandom(rng *rand.Rand, n int) []restorePropOp {
	var ops []restorePropOp
	for range n {
		tb := restorePropTables[rng.Intn(len(restorePropTables))]
		switch rng.Intn(5) {
		case 0:
			ops = append(ops, restorePropOp{kind: "md", table: tb, arg: rng.Intn(2)})
		case 1:
			ops = append(ops, restorePropOp{kind: "ddl", table: tb, arg: rng.Intn(3)})
		case 2:
			ops = append(ops, restorePropOp{kind: "schema", id: restorePropIDs[rng.Intn(len(restorePropIDs))], arg: rng.Intn(5)})
		default:
			ops = append(ops, restorePropOp{kind: "dml", table: tb})
		}
	}
	return ops
}

func (o restorePropOp) String() string {
	if o.kind == "schema" {
		return fmt.Sprintf("schema(%s,%d)", o.id, o.arg)
	}
	return fmt.Sprintf("%s(%s,%d)", o.kind, o.table, o.arg)
}

func restorePropApply(c *Catalog, o restorePropOp, i int) string {
	var evs []*Event
	switch o.kind {
	case "md":
		ev, err := c.ApplyMetadata(restorePropMD(o.table, o.arg), fmt.Sprintf("p%d", i), t0)
		if err != nil {
			return "err " + err.Error()
		}
		if ev != nil {
			evs = append(evs, ev)
		}
	case "ddl":
		ev, err := c.ApplyDDL(o.table, restorePropDDL(o.table, o.arg), fmt.Sprintf("p%d", i), t0)
		if err != nil {
			return "err " + err.Error()
		}
		if ev != nil {
			evs = append(evs, ev)
		}
	case "schema":
		e, err := c.ApplySchemaRecord(o.id, restorePropSchema(o.id, o.arg))
		if err != nil {
			return "err " + err.Error()
		}
		evs = e
	case "dml":
		// as pipeline.handleDecoded does
		if v := c.Current(o.table); v != nil && v.Provisional && !v.Hold {
			v.MarkWritten()
		}
	}
	var out []string
	for _, ev := range evs {
		out = append(out, fmt.Sprintf("%d:%s v%d", ev.Kind, ev.Version.Table, ev.Version.Number))
	}
	return strings.Join(out, ",")
}

func restorePropState(c *Catalog) string {
	var out []string
	for _, tb := range restorePropTables {
		v := c.Current(tb)
		if v == nil {
			out = append(out, tb+": -")
			continue
		}
		var cols []string
		for _, col := range v.Columns {
			cols = append(cols, fmt.Sprintf("%s:%v:%v:%s", col.Name, col.Type, col.Nullable, col.TypeFrom))
		}
		out = append(out, fmt.Sprintf("%s: v%d prov=%v hold=%v written=%v [%s]", tb, v.Number, v.Provisional, v.Hold, v.Written(), strings.Join(cols, " ")))
	}
	return strings.Join(out, "; ")
}

// restorePropDiverges describes the first divergence of a restore after
// step k, or returns "".
func restorePropDiverges(t *testing.T, ops []restorePropOp, k int) string {
	live := NewCatalog(Options{})
	for i := 0; i < k; i++ {
		restorePropApply(live, ops[i], i)
	}
	restored := restoreViaJSON(t, live, Options{})
	if a, b := restorePropState(live), restorePropState(restored); a != b {
		return fmt.Sprintf("at restore (after %d ops):\n live     %s\n restored %s", k, a, b)
	}
	for i := k; i < len(ops); i++ {
		e1, e2 := restorePropApply(live, ops[i], i), restorePropApply(restored, ops[i], i)
		if a, b := restorePropState(live), restorePropState(restored); e1 != e2 || a != b {
			return fmt.Sprintf("op %d %v after restore at %d: events live %q restored %q\n live     %s\n restored %s", i, ops[i], k, e1, e2, a, b)
		}
	}
	return ""
}

func TestRestoreAnywhereBuildsWhatTheLiveCatalogBuilds(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 20000; n++ {
		ops := restorePropRandom(rng, 4+rng.Intn(10))
		k := rng.Intn(len(ops) + 1)
		if d := restorePropDiverges(t, ops, k); d != "" {
			t.Fatalf("ops %v, restored after %d: %s", ops, k, d)
		}
	}
}
