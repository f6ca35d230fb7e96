package commit

import (
	"context"
)

// Round is a complete commit round: every file its intents name is
// uploaded, and no checkpoint of it is written yet.
type Round struct {
	// ID names the round: the run and its number, unique across runs. A
	// publisher tags what it commits with it, so that recovery can tell a
	// table that holds the round from one that does not.
	ID string
	// Files are the round's uploaded files, by source partition then in
	// the order their intents were written; dead-letter files have no
	// Table.
	Files []File
	// Offsets are the source offsets the round's checkpoints will record,
	// per source partition.
	Offsets map[string]int64
}

// Publisher makes a round visible in a table catalog (an Iceberg
// catalog, for one): one snapshot per table per round. Publish is called
// once per round that advances some partition, after every upload of the
// round and before any of its checkpoints; an error leaves the round
// uncheckpointed and unacknowledged, so its records are read and written
// again by the next run. Publish must be idempotent by Round.ID: a round
// may be published again after a crash.
type Publisher interface {
	Publish(ctx context.Context, r Round) error
}

// RecoveringPublisher is a Publisher that also takes part in recovery:
// Recover is called when a partition is claimed, with the files its
// checkpoint does not cover (keys), before they are deleted and their
// records exported again; when it fails, nothing is deleted and the
// claim fails.
type RecoveringPublisher interface {
	Publisher
	Recover(ctx context.Context, files []string) error
}

// WithdrawingPublisher is a Publisher that takes back what it published
// of a round whose checkpoint this run then lost to another instance (it
// was fenced between Publish and the checkpoint): Withdraw is called with
// the round's files of that partition while they are still in storage,
// before they are deleted. When it fails, the files and their intents are
// kept, for the partition's next claim to withdraw and delete them.
type WithdrawingPublisher interface {
	Publisher
	Withdraw(ctx context.Context, files []File) error
}

// NopPublisher publishes nothing: the files in storage and the
// checkpoints are the whole output.
type NopPublisher struct{}

// Publish does nothing.
func (NopPublisher) Publish(context.Context, Round) error { return nil }
