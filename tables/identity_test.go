package tables

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentity: configs that reach one catalog have one identity,
// whatever their credentials, options or spelling; others differ.
func TestIdentity(t *testing.T) {
	wd, _ := os.Getwd()
	same := [][2]Config{
		{{Kind: SQL, URI: "postgres://a:pw1@DB.example:5432/cat?sslmode=disable"}, {Kind: SQL, URI: "postgres://b:pw2@db.example/cat"}},
		{{Kind: SQL, URI: "postgres:///cat?host=/run/pg&port=5433"}, {Kind: SQL, URI: "postgres://?host=/run/pg&port=5433&dbname=cat"}},
		{{Kind: SQL, URI: "sqlite://cat.db"}, {Kind: SQL, URI: "sqlite://" + filepath.Join(wd, "cat.db")}},
		{{Kind: SQL, URI: "sqlite:///x/cat.db", Name: "lakehouse"}, {Kind: SQL, URI: "sqlite:///x/cat.db", Properties: map[string]string{"k": "v"}}},
		{{Kind: REST, URI: "http://u:p@h:8181/?x=1"}, {Kind: REST, URI: "http://H:8181"}},
		{{Kind: REST, URI: "https://h:443/api"}, {Kind: REST, URI: "https://h/api"}},
	}
	for _, c := range same {
		if a, b := c[0].Identity(), c[1].Identity(); a != b {
			t.Errorf("one catalog, two identities: %q and %q", a, b)
		}
		for _, id := range []string{c[0].Identity(), c[1].Identity()} {
			for _, secret := range []string{"pw1", "pw2", ":p@"} {
				if strings.Contains(id, secret) {
					t.Errorf("identity %q holds a credential", id)
				}
			}
		}
	}
	differ := [][2]Config{
		{{Kind: SQL, URI: "sqlite:///x/a.db"}, {Kind: SQL, URI: "sqlite:///x/b.db"}},
		{{Kind: SQL, URI: "sqlite:///x/a.db"}, {Kind: SQL, URI: "sqlite:///x/a.db", Name: "other"}},
		{{Kind: SQL, URI: "postgres://db/cat"}, {Kind: SQL, URI: "postgres://db:5433/cat"}},
		{{Kind: Hadoop, Warehouse: "file:///a"}, {Kind: Hadoop, Warehouse: "file:///b"}},
		{{Kind: Hadoop, Warehouse: "file:///a"}, {Kind: Hadoop, Warehouse: "file:///a", Namespace: "lake"}},
		{{Kind: REST, URI: "http://h:8181", Warehouse: "w1"}, {Kind: REST, URI: "http://h:8181", Warehouse: "w2"}},
	}
	for _, c := range differ {
		if a, b := c[0].Identity(), c[1].Identity(); a == b {
			t.Errorf("two catalogs, one identity %q", a)
		}
	}
}
