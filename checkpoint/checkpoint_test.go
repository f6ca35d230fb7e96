package checkpoint

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

func TestSaveLoadRoundTripAndMonotonicSet(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	ctx := context.Background()
	empty, err := Load(ctx, st)
	if err != nil || len(empty.Offsets()) != 0 {
		t.Fatalf("empty sink: %+v %v", empty, err)
	}
	var c Checkpoint
	c.Set("p1", 10)
	c.Set("p1", 7) // never moves back
	c.Set("p2", 3)
	if err := Save(ctx, st, c, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	got, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if o := got.Offsets(); o["p1"] != 10 || o["p2"] != 3 || len(o) != 2 {
		t.Errorf("offsets %v", o)
	}
}

func TestCorruptCheckpointSaysWhatToDo(t *testing.T) {
	st, _ := store.NewLocal(t.TempDir())
	st.Put(context.Background(), Key, []byte("{not json"))
	_, err := Load(context.Background(), st)
	if err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("corrupt checkpoint: %v", err)
	}
}
