package writer

import (
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
)

// converterPair is what Append needs per schema version, computed once.
type converterPair struct {
	recordConverter
	seg    string    // the table's folder
	hint   *sizeHint // what the version's last file held
	segErr error     // the table name has no folder
	// announced is set once Config.FileSchemaAhead heard of the version.
	announced bool
	// last is the buffer the version's last record went to, while it is
	// open: records of a table mostly share its date and partition, and
	// hashing the key's strings for the map was 1.5% of the 4-table run.
	last *buffer
	// shapes are the version's file schemas, by which of its NOT NULL
	// columns held nulls ('1' per such field). Files of packed rows are
	// prepared on the goroutines that encode them, hence the lock.
	shapesMu sync.Mutex
	shapes   map[string]*parquetenc.Shape
	// fileSchema is the version's schema with Config.FileSchema's
	// metadata, once asked; set under shapesMu before the version's first
	// file is flushed.
	fileSchema *arrow.Schema
}

// recordConverter converts the images of one schema version's records.
type recordConverter struct {
	row, before *imageConverter
	hasBefore   bool // the version's files carry before_image
	// The last Qlik masks and what they meant: a table's messages mostly
	// repeat them, and parsing each cost allocations per record.
	columnMask, changeMask qlikMask
}

func newRecordConverter(v *arrowschema.Version) recordConverter {
	return recordConverter{row: newImageConverter(v), before: newImageConverter(v),
		hasBefore: v.Schema.HasField(arrowschema.ColBeforeImage)}
}

// convertInto converts rec, a row change, under v into out, the error
// included; out's slots and arena take the values.
func (c *recordConverter) convertInto(v *arrowschema.Version, rec *cdc.Record, out *Converted) {
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

// convert fills c.row.slots, and c.before.slots when withBefore, from
// rec, with the Qlik masks applied; changed are the columns the change
// mask names, if it came.
func (c *recordConverter) convert(v *arrowschema.Version, rec *cdc.Record) (withBefore bool, changed []string, err error) {
	rowName := "after"
	if rec.Op == cdc.OpDelete {
		rowName = "before"
	}
	if err := c.row.convert(rec.RowImage(), rowName); err != nil {
		return false, nil, err
	}
	withBefore = c.hasBefore && rec.Before.Present
	if withBefore {
		if err := c.before.convert(&rec.Before, "before"); err != nil {
			return false, nil, err
		}
	}
	if rec.Format == cdc.FormatQlik {
		if changed, err = applyQlikMasks(v, rec, c, withBefore); err != nil {
			return false, nil, err
		}
	}
	return withBefore, changed, nil
}

// qlikMask is the last mask of one kind a version's messages carried.
type qlikMask struct {
	text  string // a copy: the record's strings share its reused memory
	mask  cdc.Mask
	names []string // the columns it names, once asked for; read only, rows share it
	// absent are the indexes of the columns it leaves out, once asked for.
	absent []int
}

// absentColumns returns the indexes of v's columns that m leaves out,
// worked out once per mask rather than for every column of every row.
func (m *qlikMask) absentColumns(v *arrowschema.Version) []int {
	if m.absent == nil {
		m.absent = []int{}
		for i := range v.Columns {
			if !m.mask.Has(i + 1) {
				m.absent = append(m.absent, i)
			}
		}
	}
	return m.absent
}

// parse makes m the mask s of the named kind (columnMask or changeMask)
// for version v, parsing it only when it differs from the last.
func (m *qlikMask) parse(kind, s string, v *arrowschema.Version) error {
	if s == m.text {
		return nil
	}
	mask, err := cdc.ParseMask(s)
	if err != nil {
		return cdc.Rejectf(cdc.ReasonBadMask, "%s %q: %v", kind, s, err)
	}
	if n := len(v.Columns); mask.Max() > n {
		return cdc.Rejectf(cdc.ReasonBadMask, "%s %q names ordinal %d, but %s (schema version %d) has %d columns",
			kind, s, mask.Max(), v.Table, v.Number, n)
	}
	*m = qlikMask{text: strings.Clone(s), mask: mask}
	return nil
}
