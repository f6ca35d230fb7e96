package tables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
	"golang.org/x/sync/errgroup"
)

// TestAvroSchemasAreCompiledOnce guards the copy of twmb/avro in
// third_party/twmb-avro that go.mod puts in place of the release:
// iceberg-go parses the Avro schema in the header of every manifest and
// manifest list it opens, and the copy keeps each schema it compiled, so
// that a maintenance pass over hundreds of tables does not compile the
// same few schemas thousands of times. A schema parsed with options is
// compiled anew: options change what a string compiles to.
func TestAvroSchemasAreCompiledOnce(t *testing.T) {
	const schema = `{"type":"record","name":"manifest_file","fields":[{"name":"manifest_path","type":"string","field-id":500}]}`
	a := parsedOnce(t, schema, "the same schema string was compiled twice: is go.mod's replace of github.com/twmb/avro by third_party/twmb-avro gone?")
	lax, err := avro.Parse(schema, avro.WithLaxNames(nil))
	if err != nil {
		t.Fatal(err)
	}
	if lax == a {
		t.Fatal("a schema parsed with options was taken from the schemas parsed without")
	}
	if _, err := avro.Parse(`{"type":"record","name":"broken"`); err == nil {
		t.Fatal("a malformed schema parsed")
	}
	if _, err := avro.Parse(`{"type":"record","name":"broken"`); err == nil {
		t.Fatal("a malformed schema parsed the second time: an error must not be kept as a schema")
	}
}

// TestAvroSchemaRootsAreIndependent: the copy of twmb/avro decodes a
// schema's JSON once for Schema.Root; every caller must still get nodes
// of its own, free to change.
func TestAvroSchemaRootsAreIndependent(t *testing.T) {
	const schema = `{"type":"record","name":"r","fields":[{"name":"a","type":"long","field-id":1,"doc":"first"}]}`
	s, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	first := s.Root()
	first.Fields[0].Name = "changed"
	first.Fields[0].Props["field-id"] = int64(99)
	second := s.Root()
	if got := second.Fields[0].Name; got != "a" {
		t.Fatalf("second root's field is %q: a change to the first root reached it", got)
	}
	if got := second.Fields[0].Props["field-id"]; got != int64(1) {
		t.Fatalf("second root's field-id is %v: a change to the first root's properties reached it", got)
	}
	if got := second.Fields[0].Doc; got != "first" {
		t.Fatalf("second root's doc is %q", got)
	}
}

// TestAvroSchemaRootsKeepEverything: the copy of twmb/avro builds a
// schema's nodes once and gives each Root caller a deep copy of them. The
// copy must hold all that the schema says (converted back, it is the
// same schema), including name references resolved to their definitions
// inside the copy (a node taken out of the tree converts on its own), and
// defaults that are byte slices or records must be copies too.
func TestAvroSchemaRootsKeepEverything(t *testing.T) {
	const schema = `{"type":"record","name":"node","namespace":"ns","doc":"a list","aliases":["link"],"x-tag":{"k":[1,2.5,"s"]},"fields":[
		{"name":"value","type":["null","long"],"default":null,"field-id":1},
		{"name":"next","type":["null","node"],"default":null,"field-id":2,"doc":"the rest"},
		{"name":"kind","type":{"type":"enum","name":"kind","symbols":["A","B"],"default":"B"},"default":"A","aliases":["sort"]},
		{"name":"raw","type":"bytes","default":"\u0001\u0002"},
		{"name":"amount","type":{"type":"fixed","name":"amount16","size":16,"logicalType":"decimal","precision":38,"scale":9}},
		{"name":"tags","type":{"type":"map","values":{"type":"array","items":"string"}},"default":{"a":["b"]}},
		{"name":"pair","type":{"type":"record","name":"pair","fields":[{"name":"left","type":"kind"},{"name":"right","type":["null","node"]}]},
		 "default":{"left":"A","right":null}}
	]}`
	s, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		root := s.Root()
		back, err := root.Schema()
		if err != nil {
			t.Fatalf("round %d: the root does not convert back to a schema: %v", round, err)
		}
		var got, want any
		if err := json.Unmarshal([]byte(back.String()), &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(schema), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: the root converts back to\n%s\nnot\n%s", round, back.String(), schema)
		}
		// "next" is ["null","node"]: its second branch names the record
		// being defined, a reference that must resolve inside this copy.
		next := root.Fields[1].Type.Branches[1]
		if _, err := next.Schema(); err != nil {
			t.Fatalf("round %d: the reference to node, taken out of the tree, does not convert: %v", round, err)
		}
		raw := root.Fields[3].Default.([]byte)
		if string(raw) != "\x01\x02" {
			t.Fatalf("round %d: the bytes default is %q", round, raw)
		}
		raw[0] = 'X' // the next round's copy must not see it
		root.Props["x-tag"].(map[string]any)["k"] = nil
	}
}

// TestAvroDeflateBlocksRoundTrip: the copy of twmb/avro reuses deflate
// compressors and decompressors (iceberg-go writes every manifest and
// manifest list deflated). Blocks written and read by many goroutines at
// once, each reusing what another released, must come back as written.
func TestAvroDeflateBlocksRoundTrip(t *testing.T) {
	schema, err := avro.Parse(`{"type":"record","name":"entry","fields":[{"name":"path","type":"string"},{"name":"rows","type":"long"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Path string `avro:"path"`
		Rows int64  `avro:"rows"`
	}
	var g errgroup.Group
	for w := range 8 {
		g.Go(func() error {
			for file := range 20 {
				var buf bytes.Buffer
				wr, err := ocf.NewWriter(&buf, schema, ocf.WithCodec(ocf.DeflateCodec(-1)), ocf.WithBlockCount(7))
				if err != nil {
					return err
				}
				n := 10 + file*w
				for i := range n {
					if err := wr.Encode(entry{Path: fmt.Sprintf("w%d/f%d/%d-%s", w, file, i, strings.Repeat("x", i%50)), Rows: int64(i * w)}); err != nil {
						return err
					}
				}
				if err := wr.Close(); err != nil {
					return err
				}
				rd, err := ocf.NewReader(bytes.NewReader(buf.Bytes()))
				if err != nil {
					return err
				}
				for i := range n {
					var e entry
					if err := rd.Decode(&e); err != nil {
						return fmt.Errorf("writer %d file %d entry %d: %w", w, file, i, err)
					}
					want := entry{Path: fmt.Sprintf("w%d/f%d/%d-%s", w, file, i, strings.Repeat("x", i%50)), Rows: int64(i * w)}
					if e != want {
						return fmt.Errorf("writer %d file %d entry %d: read %+v, wrote %+v", w, file, i, e, want)
					}
				}
				var extra entry
				if err := rd.Decode(&extra); err != io.EOF {
					return fmt.Errorf("writer %d file %d: after %d entries, %v, not the end", w, file, n, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestAvroSchemaMemoStartsOver: past its size the memo starts over, so
// that the schemas in use after many others (new partition specs, schema
// changes) are kept too.
func TestAvroSchemaMemoStartsOver(t *testing.T) {
	for i := range 1000 {
		if _, err := avro.Parse(fmt.Sprintf(`{"type":"record","name":"r%d","fields":[{"name":"a","type":"long"}]}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	const schema = `{"type":"record","name":"late","fields":[{"name":"a","type":"long"}]}`
	parsedOnce(t, schema, "a schema parsed after 1,000 others was compiled again: the memo stopped keeping schemas once full")
}

// parsedOnce parses schema twice and fails with why unless both parses
// returned the same compiled schema.
func parsedOnce(t *testing.T, schema, why string) *avro.Schema {
	t.Helper()
	a, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal(why)
	}
	return a
}
