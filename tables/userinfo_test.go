package tables

import "testing"

// TestCatalogURIUserinfo: a URI whose password holds an @, /, ? or #
// not percent-encoded is refused (its driver would read a part of the
// password as the host or the database, and quote it in an error); an @
// in a query parameter's value is not a password's.
func TestCatalogURIUserinfo(t *testing.T) {
	for uri, bad := range map[string]bool{
		"postgres://bob:p@ss/wordSECRET@127.0.0.1:1/cat": true,
		"postgres://bob:ab/cdTAIL@127.0.0.1:1/cat":       true,
		"postgres://bob:Xy@Tail9@db/cat":                 true,
		"postgres://bob:p?ss@db/cat":                     true,
		"postgres://bob:p#ss@db/cat":                     true,
		"postgres://h/db?user=bob@srv":                   false,
		"https://h/api?owner=ops@example.com":            false,
		"postgres://bob:pw@db:5432/cat?sslmode=disable":  false,
		"postgres://bob@db/cat":                          false,
		"http://127.0.0.1:8181":                          false,
	} {
		if err := checkUserinfo(uri); (err != nil) != bad {
			t.Errorf("%s: %v, want refused %v", uri, err, bad)
		}
	}
}
