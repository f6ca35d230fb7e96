package arrowschema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// JSONSchemaColumn is what a table's JSON Schema record says about one
// column. Nil fields mean the record does not say.
type JSONSchemaColumn struct {
	Type     *Type
	Nullable *bool
	// Bare is set when Type says no more than the metadata does: a
	// number without multipleOf, or a string without format or encoding.
	// Data Streams writes such a schema for every table, so a type parsed
	// from DDL (NUMBER(12,2), DATE) must not give way to it.
	Bare bool
}

// JSONSchemaInfo is the part of a GoldenGate JSON Schema record that refines
// column types.
type JSONSchemaInfo struct {
	ID      string
	Title   string
	Tables  []string // qual_table values the schema declares (const/enum)
	Columns map[string]JSONSchemaColumn
	Raw     []byte // the record itself, kept for catalog snapshots
}

// ParseJSONSchema reads a JSON Schema (draft 4) record. Column definitions
// are found under properties.after or properties.before, possibly through
// definitions and $ref. A schema without row images (for example the one
// describing OBJECT_METADATA records) yields no columns and no error.
func ParseJSONSchema(id string, doc []byte) (*JSONSchemaInfo, error) {
	return SchemaFields{}.Parse(id, doc)
}

// SchemaFields names the properties of a JSON Schema record that hold the
// row images and the table's name: the record describes GoldenGate's
// records, whose field names are configurable. Empty names are the
// defaults, "after", "before" and "qual_table".
type SchemaFields struct{ After, Before, QualTable string }

// Parse is ParseJSONSchema with the row images and the table's name under
// f's names.
func (f SchemaFields) Parse(id string, doc []byte) (*JSONSchemaInfo, error) {
	after, before, qualTable := cmp.Or(f.After, "after"), cmp.Or(f.Before, "before"), cmp.Or(f.QualTable, "qual_table")
	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("JSON Schema record %q: %w", id, err)
	}
	info := &JSONSchemaInfo{ID: id, Columns: map[string]JSONSchemaColumn{}, Raw: append([]byte(nil), doc...)}
	info.Title, _ = root["title"].(string)
	r := resolver{root: root}
	props, _ := r.deref(root)["properties"].(map[string]any)
	if qt, ok := props[qualTable].(map[string]any); ok {
		qt = r.deref(qt)
		if c, ok := qt["const"].(string); ok {
			info.Tables = append(info.Tables, c)
		}
		if e, ok := qt["enum"].([]any); ok {
			for _, v := range e {
				if s, ok := v.(string); ok {
					info.Tables = append(info.Tables, s)
				}
			}
		}
	}
	for _, image := range []string{after, before} {
		def, ok := props[image].(map[string]any)
		if !ok {
			continue
		}
		for _, obj := range r.objects(def, map[uintptr]bool{}) {
			cols, _ := obj["properties"].(map[string]any)
			for name, raw := range cols {
				if _, seen := info.Columns[name]; seen {
					continue
				}
				cdef, ok := raw.(map[string]any)
				if !ok {
					continue
				}
				info.Columns[name] = r.column(cdef)
			}
		}
	}
	return info, nil
}

// namesTable reports whether the schema names table itself: its declared
// qual_table, its title or its id.
func (s *JSONSchemaInfo) namesTable(table string) bool {
	for _, t := range s.Tables {
		if t == table {
			return true
		}
	}
	return s.Title == table || s.ID == table
}

// MatchesTable reports whether the schema is the table-specific schema of
// table: its declared qual_table, its title, or an id that is the table
// name or ends with it after a separator.
func (s *JSONSchemaInfo) MatchesTable(table string) bool {
	if s.namesTable(table) {
		return true
	}
	if strings.HasSuffix(s.ID, table) {
		sep := s.ID[len(s.ID)-len(table)-1]
		return strings.ContainsRune("/#:.", rune(sep))
	}
	return false
}

type resolver struct{ root map[string]any }

// deref follows $ref pointers of the form #/definitions/NAME (and any other
// local JSON pointer), at most a few levels deep.
func (r resolver) deref(m map[string]any) map[string]any {
	for range 8 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		target, ok := r.pointer(ref)
		if !ok {
			return m
		}
		m = target
	}
	return m
}

func (r resolver) pointer(ref string) (map[string]any, bool) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	cur := any(r.root)
	for _, part := range strings.Split(path, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// firstVisit reports whether m is seen for the first time, so that a schema
// whose alternatives refer back to themselves cannot recurse without end.
func firstVisit(seen map[uintptr]bool, m map[string]any) bool {
	p := reflect.ValueOf(m).Pointer()
	if seen[p] {
		return false
	}
	seen[p] = true
	return true
}

// objects returns the object schemas an image definition can be: itself,
// or the alternatives of oneOf/anyOf (an image is often "object or null").
func (r resolver) objects(def map[string]any, seen map[uintptr]bool) []map[string]any {
	def = r.deref(def)
	if !firstVisit(seen, def) {
		return nil
	}
	var out []map[string]any
	if _, ok := def["properties"]; ok {
		out = append(out, def)
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := def[key].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				out = append(out, r.objects(m, seen)...)
			}
		}
	}
	return out
}

func (r resolver) column(def map[string]any) JSONSchemaColumn {
	var col JSONSchemaColumn
	var types []string
	var format, encoding string
	var multipleOf float64
	seen := map[uintptr]bool{}
	var visit func(m map[string]any)
	visit = func(m map[string]any) {
		m = r.deref(m)
		if !firstVisit(seen, m) {
			return
		}
		switch t := m["type"].(type) {
		case string:
			types = append(types, t)
		case []any:
			for _, v := range t {
				if s, ok := v.(string); ok {
					types = append(types, s)
				}
			}
		}
		if f, ok := m["format"].(string); ok && format == "" {
			format = f
		}
		if e, ok := m["contentEncoding"].(string); ok && encoding == "" {
			encoding = e
		}
		if mo, ok := m["multipleOf"].(float64); ok && multipleOf == 0 {
			multipleOf = mo
		}
		for _, key := range []string{"oneOf", "anyOf"} {
			alts, _ := m[key].([]any)
			for _, a := range alts {
				if am, ok := a.(map[string]any); ok {
					visit(am)
				}
			}
		}
	}
	visit(def)

	nullable := false
	var base string
	for _, t := range types {
		if t == "null" {
			nullable = true
		} else if base == "" {
			base = t
		} else if base != t {
			// Mixed types (say number or string): the widest safe choice is
			// the text, which the caller's default already covers.
			base = "mixed"
		}
	}
	if len(types) > 0 {
		col.Nullable = &nullable
	}
	var t *Type
	switch base {
	case "integer":
		t = &Type{Kind: KindInt64}
	case "number":
		if s, ok := scaleOf(multipleOf); ok {
			d := Type{Kind: KindDecimal, Precision: MaxDecimalPrecision, Scale: int32(s)}
			t = &d
		} else {
			t, col.Bare = &Type{Kind: KindFloat64}, true
		}
	case "boolean":
		t = &Type{Kind: KindBoolean}
	case "string":
		switch {
		case format == "date-time":
			t = &Type{Kind: KindTimestamp}
		case format == "date":
			t = &Type{Kind: KindDate}
		case encoding == "base64":
			t = &Type{Kind: KindBinary}
		default:
			t, col.Bare = &Type{Kind: KindString}, true
		}
	}
	col.Type = t
	return col
}

// scaleOf returns s when multipleOf is exactly 10^-s (a fixed-scale number).
func scaleOf(multipleOf float64) (int, bool) {
	if multipleOf <= 0 || multipleOf > 1 {
		return 0, false
	}
	for s := 0; s <= 18; s++ {
		if math.Abs(multipleOf-math.Pow10(-s)) < math.Pow10(-s-6) {
			return s, true
		}
	}
	return 0, false
}
