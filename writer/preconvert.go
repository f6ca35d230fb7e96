package writer

import (
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
)

// Preconverter converts records' images into column values ahead of
// their Append, on a goroutine other than the Writer's. Converting needs
// nothing but the record and its schema version, and it was a third of
// the work of the goroutine that owns the buffers, which the whole
// export waits on. A Preconverter is used by one goroutine at a time.
type Preconverter struct {
	convs map[*arrowschema.Version]*recordConverter
}

// maxPreconverted bounds the versions a Preconverter keeps converters
// for: versions that are no longer in force are not told apart, so the
// lot is dropped now and then.
const maxPreconverted = 4096

// maxKeptArena is the largest arena a Converted keeps for the next
// record: a record converted ahead holds its arena until it is reused.
const maxKeptArena = 256 << 10

// NewPreconverter returns a Preconverter with no versions seen yet.
func NewPreconverter() *Preconverter {
	return &Preconverter{convs: map[*arrowschema.Version]*recordConverter{}}
}

// Converted is a record converted ahead under one schema version. Its
// values point into the record's memory and its own, so it is used
// (passed to Append) before either is reused.
type Converted struct {
	version     *arrowschema.Version // nil: not converted
	row, before []slot
	withBefore  bool
	changed     []string
	err         error  // what Append returns for it
	arena       []byte // unescaped strings and decoded binaries
}

// Under reports whether c was converted under v.
func (c *Converted) Under(v *arrowschema.Version) bool { return c.version == v && v != nil }

// Clear marks c as not converted.
func (c *Converted) Clear() { c.version, c.err, c.changed = nil, nil, nil }

// Convert converts rec, a row change, under v into out, the error
// included: Append returns that error if v is still the version in
// force when the record's turn comes.
func (p *Preconverter) Convert(v *arrowschema.Version, rec *cdc.Record, out *Converted) {
	c := p.convs[v]
	if c == nil {
		if len(p.convs) >= maxPreconverted {
			clear(p.convs)
		}
		rc := newRecordConverter(v)
		c = &rc
		p.convs[v] = c
	}
	if cap(out.arena) > maxKeptArena {
		out.arena = nil // a long record's: not kept for the short ones after it
	}
	out.arena = out.arena[:0]
	c.row.slots, c.before.slots = resized(out.row, len(v.Columns)), resized(out.before, len(v.Columns))
	c.row.arena, c.before.arena = &out.arena, &out.arena
	out.withBefore, out.changed, out.err = c.convert(v, rec)
	out.row, out.before, out.version = c.row.slots, c.before.slots, v
	// The slots are out's now: the next record's conversion takes its own.
	c.row.slots, c.before.slots, c.row.arena, c.before.arena = nil, nil, nil, nil
}

func resized(s []slot, n int) []slot {
	if cap(s) < n {
		return make([]slot, n)
	}
	return s[:n]
}
