package tables

import (
	"testing"

	"github.com/twmb/avro"
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
	a, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same schema string was compiled twice: is go.mod's replace of github.com/twmb/avro by third_party/twmb-avro gone?")
	}
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
