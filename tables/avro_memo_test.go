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
