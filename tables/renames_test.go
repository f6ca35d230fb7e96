package tables

import (
	"maps"
	"testing"
)

// composeRenames gives each column's name at the base version, through
// the renames of the versions after it: chains, a swap in one version, a
// rename back to the base name (no rename left), versions at or before
// the base ignored.
func TestComposeRenames(t *testing.T) {
	byVersion := map[int]map[string]string{
		2: {"OLD": "GONE"},         // before the base: ignored
		4: {"B": "A", "Q": "P"},    // A → B, P → Q
		5: {"C": "B"},              // B → C
		6: {"P": "Q", "Y": "X"},    // Q back to P; X → Y
		7: {"X": "Y", "Y2": "ZZZ"}, // Y back to X; ZZZ → Y2
		8: {"S": "T", "T": "S"},    // a swap
	}
	got := composeRenames(byVersion, 3, 8)
	want := map[string]string{"C": "A", "Y2": "ZZZ", "S": "T", "T": "S"}
	if !maps.Equal(got, want) {
		t.Errorf("composeRenames = %v, want %v", got, want)
	}
	if got := composeRenames(byVersion, 8, 8); len(got) != 0 {
		t.Errorf("no version after the base: %v, want none", got)
	}
}
