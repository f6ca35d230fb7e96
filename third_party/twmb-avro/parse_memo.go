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

// rootTree keeps the nodes Schema.Root builds for a Schema, built once:
// iceberg-go calls Root at every manifest it opens, and building the
// nodes from the schema's JSON (decoding it, then nodeFromJSON, the
// default fixups and the name-reference stamps) was a tenth of the CPU of
// a maintenance pass. Each call gets its own deep copy of the tree, since
// its caller is free to change the nodes it gets.
type rootTree struct {
	once sync.Once
	node *SchemaNode
	err  error
}

func (r *rootTree) get(full string) (*SchemaNode, error) {
	r.once.Do(func() {
		raw, err := unmarshalAnyPreservePrecision(full)
		if err != nil {
			r.err = err
			return
		}
		// One shape memo for the whole walk: stray bodies nest, so re-validating
		// each subtree once per enclosing level would be O(depth^2).
		n := nodeFromJSON(raw, "", make(strayShapeMemo))
		table := fixupNameRefDefaults(&n)
		// Stamp each name-reference node with its resolved target so an extracted
		// subtree converts even when the definition lives outside it. Same table
		// the default fixup resolved through, so the two surfaces cannot bind a
		// reference differently.
		stampNameRefs(&n, table, "")
		r.node = &n
	})
	if r.err != nil {
		return nil, r.err
	}
	return cloneNodeTree(r.node), nil
}

// cloneNodeTree deep-copies the tree under root: every node, slice, map
// and default value is new, and each name reference's target (refTarget)
// is the copy of its target.
func cloneNodeTree(root *SchemaNode) *SchemaNode {
	copies := make(map[*SchemaNode]*SchemaNode)
	out := new(SchemaNode)
	cloneNodeInto(out, root, copies)
	for _, c := range copies {
		if c.refTarget != nil {
			if t, ok := copies[c.refTarget]; ok {
				c.refTarget = t
			}
		}
	}
	return out
}

// cloneNodeInto makes dst a deep copy of src, recording in copies where
// each node of src's tree went.
func cloneNodeInto(dst, src *SchemaNode, copies map[*SchemaNode]*SchemaNode) {
	*dst = *src
	copies[src] = dst
	dst.Aliases = cloneStrings(src.Aliases)
	dst.Symbols = cloneStrings(src.Symbols)
	dst.Props = cloneProps(src.Props)
	if src.Items != nil {
		dst.Items = new(SchemaNode)
		cloneNodeInto(dst.Items, src.Items, copies)
	}
	if src.Values != nil {
		dst.Values = new(SchemaNode)
		cloneNodeInto(dst.Values, src.Values, copies)
	}
	if src.Branches != nil {
		dst.Branches = make([]SchemaNode, len(src.Branches))
		for i := range src.Branches {
			cloneNodeInto(&dst.Branches[i], &src.Branches[i], copies)
		}
	}
	if src.Fields != nil {
		dst.Fields = make([]SchemaField, len(src.Fields))
		for i := range src.Fields {
			f := &dst.Fields[i]
			*f = src.Fields[i]
			f.Aliases = cloneStrings(f.Aliases)
			f.Props = cloneProps(f.Props)
			f.Default = cloneJSONValue(f.Default)
			cloneNodeInto(&f.Type, &src.Fields[i].Type, copies)
		}
	}
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append(make([]string, 0, len(s)), s...)
}

func cloneProps(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return cloneJSONValue(m).(map[string]any)
}

// cloneJSONValue copies a tree of JSON-like values (properties, defaults):
// maps, slices and byte slices are copied, the rest (numbers, strings,
// bools, nil) are values.
func cloneJSONValue(v any) any {
	switch tv := v.(type) {
	case map[string]any:
		if tv == nil {
			return tv
		}
		out := make(map[string]any, len(tv))
		for k, val := range tv {
			out[k] = cloneJSONValue(val)
		}
		return out
	case []any:
		if tv == nil {
			return tv
		}
		out := make([]any, len(tv))
		for i, val := range tv {
			out[i] = cloneJSONValue(val)
		}
		return out
	case []byte:
		if tv == nil {
			return tv
		}
		return append(make([]byte, 0, len(tv)), tv...)
	default:
		return v
	}
}
