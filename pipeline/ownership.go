package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/checkpoint"
	"github.com/lakehouse-exporter/lakehouse-exporter/commit"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"golang.org/x/sync/errgroup"
)

// catalogs holds the schema catalogs: one shared one (key "") for sources
// replayed from their beginning, whose records rebuild it, else one per
// source partition, saved in its checkpoint and restored when the
// partition is taken.
type catalogs struct {
	opts         arrowschema.Options
	perPartition bool
	m            map[string]*arrowschema.Catalog
}

func newCatalogs(opts arrowschema.Options, perPartition bool) *catalogs {
	c := &catalogs{opts: opts, perPartition: perPartition, m: map[string]*arrowschema.Catalog{}}
	if !perPartition {
		c.m[""] = arrowschema.NewCatalog(opts)
	}
	return c
}

// key is partition's catalog's key.
func (c *catalogs) key(partition string) string { return catalogKey(c.perPartition, partition) }

// of returns the schema catalog that partition's records use.
func (c *catalogs) of(partition string) *arrowschema.Catalog {
	k := c.key(partition)
	cat := c.m[k]
	if cat == nil {
		cat = arrowschema.NewCatalog(c.opts)
		c.m[k] = cat
	}
	return cat
}

// restore sets a partition's catalog from its checkpoint's snapshot (a
// new one when there is none).
func (c *catalogs) restore(partition string, raw json.RawMessage) error {
	cat := arrowschema.NewCatalog(c.opts)
	if len(raw) > 0 {
		var snap arrowschema.Snapshot
		if err := json.Unmarshal(raw, &snap); err != nil {
			return fmt.Errorf("checkpoint of %s: catalog snapshot: %w; %s", partition, err, checkpoint.RebuildAdvice(partition, true))
		}
		restored, err := arrowschema.RestoreCatalog(c.opts, snap)
		if err != nil {
			return fmt.Errorf("checkpoint of %s: %w; %s", partition, err, checkpoint.RebuildAdvice(partition, true))
		}
		cat = restored
	}
	c.m[partition] = cat
	return nil
}

// snapshot is a partition's catalog as a checkpoint saves it.
func (c *catalogs) snapshot(partition string) (json.RawMessage, error) {
	return json.Marshal(c.of(partition).Snapshot())
}

// forget drops the partitions' catalogs, at a rebalance: another instance
// may own them next.
func (c *catalogs) forget() {
	if c.perPartition {
		c.m = map[string]*arrowschema.Catalog{}
	}
}

// tables counts the tables the catalogs know.
func (c *catalogs) tables() int {
	n := 0
	for _, cat := range c.m {
		n += cat.Tables()
	}
	return n
}

// catalogKey is partition's catalog's key: "" when one catalog serves
// every partition.
func catalogKey(perPartition bool, partition string) string {
	if !perPartition {
		return ""
	}
	return partition
}

// partition returns a partition this run owns, taking it (claim and
// recovery, commit.Committer.Take) the first time it is seen.
func (r *runner) partition(ctx context.Context, name string) (*commit.Partition, error) {
	if ps := r.commits.Partition(name); ps != nil {
		return ps, nil
	}
	cp, err := r.commits.Take(ctx, name, r.cfg.Now())
	if err != nil {
		return nil, err
	}
	return r.adopt(name, cp)
}

// adopt records a partition taken with checkpoint cp, and its catalog.
func (r *runner) adopt(name string, cp *checkpoint.Handle) (*commit.Partition, error) {
	ps := r.commits.Adopt(name, cp)
	r.taken = append(r.taken, name)
	if r.cats.perPartition {
		if err := r.cats.restore(name, ps.Catalog()); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// control handles partition ownership events of the source.
func (r *runner) control(ctx context.Context, c *source.Control) error {
	if c.Resume != nil {
		// Each take is a few requests to the store; one after another
		// they held up the assignment by that much per partition.
		var todo []string
		for _, p := range c.Partitions {
			if r.commits.Partition(p) == nil {
				todo = append(todo, p)
			}
		}
		taken := make([]*checkpoint.Handle, len(todo))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		now := r.cfg.Now() // Config.Now need not be safe for concurrent use
		for i, p := range todo {
			g.Go(func() error {
				cp, err := r.commits.Take(gctx, p, now)
				taken[i] = cp
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for i, p := range todo {
			if _, err := r.adopt(p, taken[i]); err != nil {
				return err
			}
		}
		resume := map[string]int64{}
		for _, p := range c.Partitions {
			ps, err := r.partition(ctx, p)
			if err != nil {
				return err
			}
			if ps.Offset() >= 0 {
				// (A checkpoint of no progress, written by a claim, leaves
				// the start to the source's own rule.)
				resume[p] = ps.Offset() + 1
			}
		}
		c.Resume <- resume
		return nil
	}
	if c.Checkpoint != nil {
		// A drain read its partitions: durable now, kept.
		err := r.commit(ctx, "drain")
		c.Checkpoint <- err
		return err
	}
	// Giving up every partition: make all of it durable first, then forget
	// it, since another instance may own it next.
	err := r.commit(ctx, "rebalance")
	if err == nil {
		r.commits.Forget()
		r.cats.forget()
		r.writer.ForgetIdleVersions() // the catalogs restored next make new versions
	}
	c.Done <- err
	return err
}

// versionMark names v in a checkpoint.
func versionMark(v *arrowschema.Version) checkpoint.VersionMark {
	return checkpoint.VersionMark{Table: v.Table, Version: v.Number, OpenedAtPos: v.OpenedAtPos}
}

// markReleased marks the version in force for table written, before its
// refresh is applied, when it is provisional and an earlier run (or this
// one) wrote DML under it, released by a hold limit or read from another
// input file: a replay that
// skipped those rows as durable then opens the same next version as that
// run did, instead of replacing the version its files were written with.
// (Kafka partitions need none of this: their checkpoints keep the whole
// catalog, marks included, and are not replayed from their start.)
func (r *runner) markReleased(catalog *arrowschema.Catalog, table string) {
	if v := catalog.Current(table); v != nil && v.Provisional && r.commits.Released(versionMark(v)) {
		v.MarkWritten()
	}
}
