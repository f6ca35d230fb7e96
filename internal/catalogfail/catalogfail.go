// Package catalogfail wraps an Iceberg catalog so that it fails on cue,
// for tests of what the exporter does when its catalog is down, refuses
// it, or keeps reporting conflicts: tables.Config.WrapCatalog takes Wrap.
package catalogfail

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Op names a catalog call Catalog can fail.
type Op string

// The calls Catalog passes through Fail; the others go straight through.
const (
	Load   Op = "load"   // LoadTable
	Create Op = "create" // CreateNamespace, CreateTable
	Commit Op = "commit" // CommitTable
)

// Call is one call about to reach the wrapped catalog.
type Call struct {
	Op    Op
	Ident table.Identifier
	// Snapshot is true for a commit that adds a snapshot (a round's files
	// appended, or files withdrawn), false for one that only changes the
	// schema or the properties.
	Snapshot bool
	// Seq counts the calls of this Op and Snapshot so far, this one
	// included, from 1.
	Seq int
}

// Catalog passes every call to the catalog it wraps unless its fail
// function returns an error for it. Tables it loads or creates commit
// through it.
type Catalog struct {
	catalog.Catalog

	mu    sync.Mutex
	fail  func(Call) error
	seq   map[[2]any]int
	calls []Call
	// Passed counts the snapshot commits that reached the wrapped catalog
	// and succeeded.
	passed int
}

// New returns a Catalog that asks fail about each call; nil fails none.
func New(fail func(Call) error) *Catalog {
	return &Catalog{fail: fail, seq: map[[2]any]int{}}
}

// Wrap makes c wrap inner, and returns c: a tables.Config.WrapCatalog.
func (c *Catalog) Wrap(inner catalog.Catalog) catalog.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Catalog = inner
	return c
}

// SetFail replaces the fail function (nil: the catalog is back).
func (c *Catalog) SetFail(fail func(Call) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail = fail
}

// Calls returns the calls asked about so far, in order.
func (c *Catalog) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// SnapshotsCommitted is how many snapshot commits went through.
func (c *Catalog) SnapshotsCommitted() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.passed
}

func (c *Catalog) check(op Op, ident table.Identifier, snapshot bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := [2]any{op, snapshot}
	c.seq[k]++
	call := Call{Op: op, Ident: slices.Clone(ident), Snapshot: snapshot, Seq: c.seq[k]}
	c.calls = append(c.calls, call)
	if c.fail == nil {
		return nil
	}
	return c.fail(call)
}

// bind makes tbl commit through c.
func (c *Catalog) bind(tbl *table.Table) *table.Table {
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c)
}

// LoadTable loads the table through the wrapped catalog.
func (c *Catalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if err := c.check(Load, ident, false); err != nil {
		return nil, err
	}
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return c.bind(tbl), nil
}

// CreateNamespace creates the namespace through the wrapped catalog.
func (c *Catalog) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	if err := c.check(Create, ns, false); err != nil {
		if !errors.Is(err, ErrResponseLost) {
			return err
		}
		if cerr := c.Catalog.CreateNamespace(ctx, ns, props); cerr != nil {
			return cerr
		}
		return err
	}
	return c.Catalog.CreateNamespace(ctx, ns, props)
}

// CreateTable creates the table through the wrapped catalog.
func (c *Catalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	if err := c.check(Create, ident, false); err != nil {
		if !errors.Is(err, ErrResponseLost) {
			return nil, err
		}
		if _, cerr := c.Catalog.CreateTable(ctx, ident, sc, opts...); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	tbl, err := c.Catalog.CreateTable(ctx, ident, sc, opts...)
	if err != nil {
		return nil, err
	}
	return c.bind(tbl), nil
}

// CommitTable commits through the wrapped catalog.
func (c *Catalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	snapshot := slices.ContainsFunc(updates, func(u table.Update) bool { return u.Action() == "add-snapshot" })
	if err := c.check(Commit, ident, snapshot); err != nil {
		if !errors.Is(err, ErrResponseLost) {
			return nil, "", err
		}
		if _, _, cerr := c.Catalog.CommitTable(ctx, ident, reqs, updates); cerr != nil {
			return nil, "", cerr
		}
		return nil, "", err
	}
	md, loc, err := c.Catalog.CommitTable(ctx, ident, reqs, updates)
	if err == nil && snapshot {
		c.mu.Lock()
		c.passed++
		c.mu.Unlock()
	}
	return md, loc, err
}

// ErrResponseLost, answered by a fail function for a commit or a
// creation, lets the call reach the wrapped catalog and land, then
// answers with it: a response lost on its way back, or a server that
// failed a creation another writer's made at the same moment.
var ErrResponseLost = errors.New("injected: read tcp 127.0.0.1:5432: connection reset by peer (the commit landed)")

// ErrDown is what Down answers: the catalog cannot be reached.
var ErrDown = errors.New("injected: dial tcp 127.0.0.1:5432: connect: connection refused")

// Down fails every call, as a catalog that cannot be reached does.
func Down(Call) error { return ErrDown }

// SnapshotsAfter lets n snapshot commits through and fails every later
// one with err; other calls go through.
func SnapshotsAfter(n int, err error) func(Call) error {
	return func(c Call) error {
		if c.Op == Commit && c.Snapshot && c.Seq > n {
			return err
		}
		return nil
	}
}
