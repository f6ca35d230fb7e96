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

// Under reports whether c was converted under v; false for a nil c.
func (c *Converted) Under(v *arrowschema.Version) bool { return c != nil && c.version == v && v != nil }

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
	c.convertInto(v, rec, out)
}

func resized(s []slot, n int) []slot {
	if cap(s) < n {
		return make([]slot, n)
	}
	return s[:n]
}
