package avro

// This file is the one addition of lakehouse-exporter's copy of
// github.com/twmb/avro v1.8.0 (see PATCHED.md): Parse without options
// returns the Schema it compiled before for the same string.
//
// Every Avro object container file carries its schema as JSON in its
// header, and ocf.NewReader parses it at each opening. An Iceberg table's
// manifests and manifest lists all carry one of a handful of schemas, and
// iceberg-go opens them by the thousand (scan planning, commits, snapshot
// expiry): parsing the same few schemas again was a fifth of the CPU of a
// maintenance pass over 500 tables. A Schema is immutable and safe for
// concurrent use, so one compiled Schema can serve every caller that
// parses the same string without options.

import "sync"

const (
	// parseMemoEntries bounds the schemas kept; when it is reached, the
	// memo starts over, so that the schemas in use now are kept even
	// after many others (each partition spec or table schema change
	// brings new manifest schemas).
	parseMemoEntries = 256
	// parseMemoMaxLen: longer schema strings are compiled each time, so
	// that the memo holds at most parseMemoEntries × 64 KiB of them.
	parseMemoMaxLen = 64 << 10
)

var parseMemo struct {
	mu sync.RWMutex
	m  map[string]*Schema
}

func parseMemoized(schema string) (*Schema, error) {
	parseMemo.mu.RLock()
	s, ok := parseMemo.m[schema]
	parseMemo.mu.RUnlock()
	if ok {
		return s, nil
	}
	s, err := parseNew(schema)
	if err != nil || len(schema) > parseMemoMaxLen {
		return s, err
	}
	parseMemo.mu.Lock()
	defer parseMemo.mu.Unlock()
	if prior, ok := parseMemo.m[schema]; ok {
		return prior, nil // compiled meanwhile by another caller: share one
	}
	if parseMemo.m == nil || len(parseMemo.m) >= parseMemoEntries {
		parseMemo.m = make(map[string]*Schema, parseMemoEntries)
	}
	parseMemo.m[schema] = s
	return s, nil
}

// rootJSON keeps a Schema's JSON decoded once for Schema.Root, which
// iceberg-go calls at every manifest it opens: decoding the JSON was half
// of Root's cost. Each call gets its own copy of the tree, since the
// nodes Root builds may hold parts of it (properties, defaults) that
// their caller is free to change.
type rootJSON struct {
	once sync.Once
	v    any
	err  error
}

func (r *rootJSON) tree(full string) (any, error) {
	r.once.Do(func() { r.v, r.err = unmarshalAnyPreservePrecision(full) })
	if r.err != nil {
		return nil, r.err
	}
	return cloneJSONValue(r.v), nil
}

// cloneJSONValue copies a tree of the values unmarshalAnyPreservePrecision
// returns: maps and slices are copied, the rest (numbers, strings, bools,
// nil) are values.
func cloneJSONValue(v any) any {
	switch tv := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(tv))
		for k, val := range tv {
			out[k] = cloneJSONValue(val)
		}
		return out
	case []any:
		out := make([]any, len(tv))
		for i, val := range tv {
			out[i] = cloneJSONValue(val)
		}
		return out
	default:
		return v
	}
}
