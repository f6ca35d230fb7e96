package cdc

// interner keeps one copy of each column and table name so that decoding a
// row image does not allocate a string per field. It is bounded: hostile
// input with ever-new names falls back to plain allocation.
type interner struct{ m map[string]string }

const maxInterned = 1 << 16

func newInterner() interner { return interner{m: make(map[string]string)} }

func (in interner) bytes(b []byte) string {
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}

func (in interner) string(s string) string {
	if v, ok := in.m[s]; ok {
		return v
	}
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}
