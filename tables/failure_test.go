package tables

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/catalogfail"
)

// failureFixture is a publisher working through a catalogfail.Catalog on
// SQLite, a second publisher on the same catalog (another writer), and a
// round of one file ready to publish.
type failureFixture struct {
	p, other *Publisher
	fc       *catalogfail.Catalog
	round    Round
	dir      string
}

func newFailureFixture(t *testing.T, attempts int) *failureFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Kind: SQL, URI: "sqlite://" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + filepath.Join(dir, "wh"), CommitAttempts: attempts}
	fx := &failureFixture{fc: catalogfail.New(nil), dir: dir}
	wrapped := cfg
	wrapped.WrapCatalog = fx.fc.Wrap
	var err error
	if fx.p, err = Open(ctx, wrapped, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fx.p.Close() })
	if fx.other, err = Open(ctx, cfg, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fx.other.Close() })
	// The publisher creates the table, and keeps it as it created it.
	if _, err := fx.p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)}); err != nil {
		t.Fatal(err)
	}
	fx.round = Round{RunID: "mine", RoundID: "1", Files: []DataFile{fx.file(t, "mine", 1)}}
	return fx
}

// file writes a file of version 1 with one row of the given id.
func (fx *failureFixture) file(t *testing.T, name string, id int64) DataFile {
	t.Helper()
	v, err := fx.other.PrepareVersion(context.Background(), TableVersion{Table: "SALES.ORDERS", Version: 1, Schema: sourceSchema(1)})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	return writeFile(t, fx.dir, "data/"+name+".parquet", v.Schema, 1, []int64{id}, []time.Time{day}, id)
}

// snapshotAttempts counts the snapshot commits that reached the wrapper.
func (fx *failureFixture) snapshotAttempts() int {
	n := 0
	for _, c := range fx.fc.Calls() {
		if c.Op == catalogfail.Commit && c.Snapshot {
			n++
		}
	}
	return n
}

// checkResumes: once the catalog works again, the round publishes, and the
// table holds each of want's files once.
func (fx *failureFixture) checkResumes(t *testing.T, want ...DataFile) {
	t.Helper()
	ctx := context.Background()
	fx.fc.SetFail(nil)
	if _, err := fx.p.Publish(ctx, fx.round); err != nil {
		t.Fatalf("the catalog is back, and the round still fails: %v", err)
	}
	if _, err := fx.p.Publish(ctx, fx.round); err != nil {
		t.Fatal(err)
	}
	tbl, err := fx.other.Catalog().LoadTable(ctx, []string{"SALES", "ORDERS"})
	if err != nil {
		t.Fatal(err)
	}
	checkTableFiles(t, tbl, append(want, fx.round.Files...))
}

// TestCommitConflictStormIsBounded: another writer commits to the table
// before each of this publisher's commits, so each one is refused as
// stale. The publisher tries CommitAttempts times, then fails naming the
// table and the cause; the round is not in the table, and once the storm
// ends it publishes, every file once.
func TestCommitConflictStormIsBounded(t *testing.T) {
	ctx := context.Background()
	fx := newFailureFixture(t, 3)
	var theirs []DataFile
	for i := range 3 {
		theirs = append(theirs, fx.file(t, fmt.Sprintf("theirs-%d", i), int64(100+i)))
	}
	fx.fc.SetFail(func(c catalogfail.Call) error {
		if c.Op == catalogfail.Commit && c.Snapshot && c.Seq <= len(theirs) {
			f := theirs[c.Seq-1]
			if _, err := fx.other.Publish(ctx, Round{RunID: "other", RoundID: fmt.Sprint(c.Seq), Files: []DataFile{f}}); err != nil {
				t.Errorf("the other writer: %v", err)
			}
		}
		return nil
	})
	_, err := fx.p.Publish(ctx, fx.round)
	if err == nil {
		t.Fatal("a round published through a conflict at every attempt")
	}
	for _, want := range []string{`"SALES.ORDERS"`, "another writer committed to the table first at each of 3 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n := fx.snapshotAttempts(); n != 3 {
		t.Errorf("%d commit attempts, want CommitAttempts (3)", n)
	}
	fx.checkResumes(t, theirs...)
}

// TestCatalogDownFailsClearlyAndResumes: a catalog that cannot be reached
// fails table preparation and publishing at once (no retries), naming
// the table and what to check; when it is back, the round publishes once.
func TestCatalogDownFailsClearlyAndResumes(t *testing.T) {
	ctx := context.Background()
	fx := newFailureFixture(t, 8)
	fx.fc.SetFail(catalogfail.Down)
	_, err := fx.p.Publish(ctx, fx.round)
	if !errors.Is(err, catalogfail.ErrDown) || !strings.Contains(err.Error(), `"SALES.ORDERS"`) {
		t.Fatalf("publish with the catalog down: %v", err)
	}
	if _, err := fx.p.PrepareVersion(ctx, TableVersion{Table: "SALES.ORDERS", Version: 2, Schema: sourceSchema(2)}); !errors.Is(err, catalogfail.ErrDown) || !strings.Contains(err.Error(), "SALES.ORDERS") {
		t.Fatalf("prepare with the catalog down: %v", err)
	}
	if n := fx.snapshotAttempts(); n > 1 {
		t.Errorf("%d commit attempts against a catalog that is down, want at most one", n)
	}
	fx.checkResumes(t)
}

// TestCommitRefusedIsNotRetried: a commit the catalog refuses without
// the table changing (no permission) fails at once, naming the table and
// saying to check permissions; granted, the round publishes once.
func TestCommitRefusedIsNotRetried(t *testing.T) {
	ctx := context.Background()
	fx := newFailureFixture(t, 8)
	denied := errors.New("injected: 403 Forbidden: principal exporter may not write table SALES.ORDERS")
	fx.fc.SetFail(catalogfail.SnapshotsAfter(0, denied))
	_, err := fx.p.Publish(ctx, fx.round)
	if !errors.Is(err, denied) || !strings.Contains(err.Error(), "check the catalog's permissions") {
		t.Fatalf("publish refused: %v", err)
	}
	if n := fx.snapshotAttempts(); n != 1 {
		t.Errorf("%d attempts of a refused commit, want 1", n)
	}
	fx.checkResumes(t)
}

// TestCommitFailedIsRetried: a commit the catalog answers with
// ErrCommitFailed while the table has not moved yet (the hadoop
// catalog's answer when another writer has claimed the next metadata
// version and not yet finished its commit) is tried again.
func TestCommitFailedIsRetried(t *testing.T) {
	fx := newFailureFixture(t, 8)
	fx.fc.SetFail(func(c catalogfail.Call) error {
		if c.Op == catalogfail.Commit && c.Snapshot && c.Seq == 1 {
			return fmt.Errorf("%w: injected: metadata version already claimed", table.ErrCommitFailed)
		}
		return nil
	})
	if _, err := fx.p.Publish(context.Background(), fx.round); err != nil {
		t.Fatalf("a commit refused as raced was not tried again: %v", err)
	}
	if n := fx.snapshotAttempts(); n != 2 {
		t.Errorf("%d commit attempts, want 2", n)
	}
	fx.checkResumes(t)
}

// TestMaintainCommitWhoseResponseIsLost: the maintenance commit lands and
// its response is lost. Maintain reads the table back, finds its files
// current and reports them replaced; taken for a lost race, the retry
// would have found the replaced files gone and given the group up, and
// the pass would have deleted the files the table now holds.
func TestMaintainCommitWhoseResponseIsLost(t *testing.T) {
	ctx := context.Background()
	fx := newFailureFixture(t, 3)
	second := fx.file(t, "second", 2)
	fx.round.Files = append(fx.round.Files, second)
	if _, err := fx.p.Publish(ctx, fx.round); err != nil {
		t.Fatal(err)
	}
	tbl, err := fx.p.LoadTable(ctx, "SALES.ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	live, err := LiveFiles(ctx, tbl)
	if err != nil || len(live) != 2 {
		t.Fatalf("live files %d, %v; want the round's two", len(live), err)
	}
	compacted := fx.file(t, "compacted", 1)
	lost := false // called under the wrapper's lock: once is enough
	fx.fc.SetFail(func(c catalogfail.Call) error {
		if c.Op == catalogfail.Commit && c.Snapshot && !lost {
			lost = true
			return catalogfail.ErrResponseLost
		}
		return nil
	})
	m, err := fx.p.Maintain(ctx, "SALES.ORDERS", []RewriteGroup{{Old: []iceberg.DataFile{live[0].File, live[1].File}, Add: []DataFile{compacted}}}, nil)
	if err != nil || fmt.Sprint(m.Replaced, m.GivenUp) != "[0] []" || m.SnapshotID == 0 {
		t.Fatalf("maintain with its response lost: %+v, %v; want the group replaced", m, err)
	}
	tbl, err = fx.other.LoadTable(ctx, "SALES.ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if live, _ := LiveFiles(ctx, tbl); len(live) != 1 || live[0].File.FilePath() != compacted.Location {
		t.Errorf("the table holds %d files after the commit, want the compacted one alone", len(live))
	}
}

// TestCreationThatFailsButLandsIsTaken: a catalog that creates the
// namespace and the table but answers with an error (Iceberg's
// JDBC-backed REST server fails the insert another writer's creation of
// the same namespace beat) leaves the table usable: the publisher sees
// that they exist and goes on.
func TestCreationThatFailsButLandsIsTaken(t *testing.T) {
	ctx := context.Background()
	fx := newFailureFixture(t, 8)
	fx.fc.SetFail(func(c catalogfail.Call) error {
		if c.Op == catalogfail.Create {
			return catalogfail.ErrResponseLost
		}
		return nil
	})
	if _, err := fx.p.PrepareVersion(ctx, TableVersion{Table: "HR.EMPLOYEES", Version: 1, Schema: sourceSchema(1)}); err != nil {
		t.Fatalf("prepare a new table whose creations fail after landing: %v", err)
	}
	creates := 0
	for _, c := range fx.fc.Calls() {
		if c.Op == catalogfail.Create && c.Ident[0] == "HR" {
			creates++
		}
	}
	if creates != 2 {
		t.Errorf("%d creations went through the failing catalog, want the namespace's and the table's", creates)
	}
	if _, err := fx.other.LoadTable(ctx, "HR.EMPLOYEES"); err != nil {
		t.Errorf("the table is not there: %v", err)
	}
}
