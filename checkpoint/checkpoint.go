// Package checkpoint records what is safely in storage, so that a run
// started again does not write a change twice.
package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lakehouse-exporter/lakehouse-exporter/store"
)

// Key is where the checkpoint lives in the sink.
const Key = "_checkpoints/offsets.json"

// Store is what the checkpoint needs from storage.
type Store interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// Checkpoint maps each source partition to the last offset whose records
// are all durable in storage.
type Checkpoint struct {
	Version    int              `json:"version"`
	Partitions map[string]int64 `json:"partitions"`
	WrittenAt  time.Time        `json:"written_at"`
}

// Set records that partition is durable up to offset.
func (c *Checkpoint) Set(partition string, offset int64) {
	if c.Partitions == nil {
		c.Partitions = map[string]int64{}
	}
	if cur, ok := c.Partitions[partition]; !ok || offset > cur {
		c.Partitions[partition] = offset
	}
}

// Offsets returns a copy of the durable offsets.
func (c Checkpoint) Offsets() map[string]int64 {
	out := make(map[string]int64, len(c.Partitions))
	for k, v := range c.Partitions {
		out[k] = v
	}
	return out
}

// Load reads the checkpoint; a sink without one yields an empty one.
func Load(ctx context.Context, s Store) (Checkpoint, error) {
	data, err := s.Get(ctx, Key)
	if err != nil {
		if errors.Is(err, store.ErrNotExist) {
			return Checkpoint{Version: 1}, nil
		}
		return Checkpoint{}, fmt.Errorf("read checkpoint %s: %w", Key, err)
	}
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %s is corrupt (%v): move it away to export everything again", Key, err)
	}
	if c.Version != 1 {
		return Checkpoint{}, fmt.Errorf("checkpoint %s has version %d, which this exporter does not know", Key, c.Version)
	}
	return c, nil
}

// Save writes the checkpoint. Call it only after every file it covers is
// in storage.
func Save(ctx context.Context, s Store, c Checkpoint, now time.Time) error {
	c.Version = 1
	c.WrittenAt = now.UTC()
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := s.Put(ctx, Key, data); err != nil {
		return fmt.Errorf("write checkpoint %s: %w", Key, err)
	}
	return nil
}
