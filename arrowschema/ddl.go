package arrowschema

import (
	"strconv"
	"strings"
)

// AlterKind is one column change a DDL statement makes.
type AlterKind uint8

const (
	AlterAdd AlterKind = iota + 1
	AlterDrop
	AlterRename
	AlterModify
)

// ColumnDef is a column as a DDL statement defines it.
type ColumnDef struct {
	Name     string
	SQLType  string // as written, e.g. NUMBER(12,2)
	Nullable *bool  // nil when the statement does not say
}

// Alteration is one change to a table's columns.
type Alteration struct {
	Kind    AlterKind
	Column  ColumnDef
	NewName string // AlterRename
}

// ParsedDDL is what the exporter understood of a DDL statement.
type ParsedDDL struct {
	// Understood is false when the statement could not be parsed; DML
	// that follows must then wait for the refreshed metadata.
	Understood bool
	Create     []ColumnDef  // CREATE TABLE
	Alters     []Alteration // ALTER TABLE
}

// ChangesColumns reports whether the statement adds, drops, renames or
// retypes columns.
func (p ParsedDDL) ChangesColumns() bool { return len(p.Create) > 0 || len(p.Alters) > 0 }

// ParseDDL understands the Oracle-style statements that change a table's
// columns (CREATE TABLE, ALTER TABLE ADD/DROP/RENAME COLUMN/MODIFY) and
// recognises common statements that do not (indexes, constraints, grants,
// comments). Unquoted identifiers are upper-cased as Oracle does.
//
// A CREATE or ALTER TABLE whose parentheses or quotes do not close is not
// understood: GoldenGate truncates DDL text past maxDDLTextSize, and the
// cut-off end of a column list must not be read as the whole of it.
func ParseDDL(stmt string) ParsedDDL {
	toks, complete := tokenize(stmt)
	whole := complete && balanced(toks)
	p := &ddlParser{toks: toks}
	switch {
	case p.word("ALTER") && p.word("TABLE"):
		if !whole {
			return ParsedDDL{}
		}
		p.qualifiedName()
		return p.alter()
	case p.reset() && p.word("CREATE") && (p.word("TABLE") || (p.word("GLOBAL") && p.word("TEMPORARY") && p.word("TABLE"))):
		if !whole {
			return ParsedDDL{}
		}
		p.qualifiedName()
		cols, ok := p.columnList(false)
		return ParsedDDL{Understood: ok, Create: cols}
	}
	p.reset()
	for _, w := range [][]string{{"CREATE", "INDEX"}, {"CREATE", "UNIQUE", "INDEX"}, {"CREATE", "BITMAP", "INDEX"},
		{"DROP", "INDEX"}, {"ALTER", "INDEX"}, {"GRANT"}, {"REVOKE"}, {"COMMENT", "ON"}, {"ANALYZE"}, {"TRUNCATE"}} {
		p.reset()
		ok := true
		for _, x := range w {
			ok = ok && p.word(x)
		}
		if ok {
			return ParsedDDL{Understood: true}
		}
	}
	return ParsedDDL{}
}

type token struct {
	text   string
	quoted bool
	punct  byte
}

// tokenize splits s into tokens, leaving out comments (-- to the end of
// the line, /* */); complete is false when a quote or a comment does not
// close.
func tokenize(s string) (out []token, complete bool) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSpace(c):
			i++
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return out, true
			}
			i += j + 1
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return out, false
			}
			i += 2 + j + 2
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				out = append(out, token{text: s[i+1:], quoted: true})
				return out, false
			}
			out = append(out, token{text: s[i+1 : i+1+j], quoted: true})
			i += j + 2
		case qQuote(s[i:]) > 0:
			// Oracle's alternative quoting, q'[it's]', closes at the
			// delimiter's pair and a quote.
			n := qQuote(s[i:])
			end := strings.Index(s[i+n+1:], string(closingDelimiter(s[i+n]))+"'")
			if end < 0 {
				return out, false
			}
			out = append(out, token{text: s[i : i+n+1+end+2], quoted: true})
			i += n + 1 + end + 2
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return out, false
			}
			out = append(out, token{text: s[i : i+j+2], quoted: true})
			i += j + 2
		case strings.IndexByte("(),.;*", c) >= 0:
			out = append(out, token{punct: c})
			i++
		default:
			j := i
			for j < len(s) && !isSpace(s[j]) && strings.IndexByte("(),.;\"'*", s[j]) < 0 &&
				!strings.HasPrefix(s[j:], "--") && !strings.HasPrefix(s[j:], "/*") {
				j++
			}
			if j == i { // a lone '/' or '-'
				j++
			}
			out = append(out, token{text: strings.ToUpper(s[i:j])})
			i = j
		}
	}
	return out, true
}

// qQuote returns the length of the prefix of an Oracle q-quoted literal
// that s starts with (q' or nq', in any case) up to its delimiter, or 0.
func qQuote(s string) int {
	n := 0
	if len(s) > 0 && (s[0] == 'n' || s[0] == 'N') {
		n = 1
	}
	if len(s) > n+2 && (s[n] == 'q' || s[n] == 'Q') && s[n+1] == '\'' && !isSpace(s[n+2]) {
		return n + 2
	}
	return 0
}

// closingDelimiter is the character that closes a q-quoted literal opened
// with d.
func closingDelimiter(d byte) byte {
	switch d {
	case '[':
		return ']'
	case '{':
		return '}'
	case '(':
		return ')'
	case '<':
		return '>'
	}
	return d
}

// balanced reports whether every parenthesis of toks closes, in order.
func balanced(toks []token) bool {
	depth := 0
	for _, t := range toks {
		switch t.punct {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// isSpace reports ASCII white space. The input is UTF-8: testing single
// bytes with unicode.IsSpace would take the continuation bytes 0x85 and 0xA0
// of a non-ASCII identifier for spaces and split it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

type ddlParser struct {
	toks []token
	i    int
}

func (p *ddlParser) reset() bool { p.i = 0; return true }

func (p *ddlParser) peek() token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return token{punct: 0xff}
}

func (p *ddlParser) word(w string) bool {
	t := p.peek()
	if t.punct == 0 && !t.quoted && t.text == w {
		p.i++
		return true
	}
	return false
}

func (p *ddlParser) punct(c byte) bool {
	if p.peek().punct == c {
		p.i++
		return true
	}
	return false
}

func (p *ddlParser) ident() (string, bool) {
	t := p.peek()
	if t.punct != 0 || t.text == "" {
		return "", false
	}
	p.i++
	return t.text, true
}

func (p *ddlParser) qualifiedName() {
	p.ident()
	for p.punct('.') {
		p.ident()
	}
}

func (p *ddlParser) alter() ParsedDDL {
	if p.noColumnClause() {
		return ParsedDDL{Understood: true}
	}
	var alters []Alteration
	for {
		switch {
		case p.word("ADD"):
			if p.constraintStart() {
				return ParsedDDL{Understood: true, Alters: alters}
			}
			p.word("COLUMN")
			cols, ok := p.columnsOneOrList(false)
			if !ok {
				return ParsedDDL{}
			}
			for _, c := range cols {
				alters = append(alters, Alteration{Kind: AlterAdd, Column: c})
			}
		case p.word("MODIFY"):
			if p.word("CONSTRAINT") || p.word("PRIMARY") || p.word("UNIQUE") {
				return ParsedDDL{Understood: true, Alters: alters}
			}
			p.word("COLUMN")
			// MODIFY may change only nullability or a default: "MODIFY X NOT NULL".
			cols, ok := p.columnsOneOrList(true)
			if !ok {
				return ParsedDDL{}
			}
			for _, c := range cols {
				alters = append(alters, Alteration{Kind: AlterModify, Column: c})
			}
		case p.word("DROP"):
			if p.word("CONSTRAINT") || p.word("PRIMARY") || p.word("UNIQUE") || p.word("INDEX") {
				return ParsedDDL{Understood: true, Alters: alters}
			}
			var names []string
			if p.word("COLUMN") {
				n, ok := p.ident()
				if !ok {
					return ParsedDDL{}
				}
				names = append(names, n)
			} else if p.punct('(') {
				for {
					n, ok := p.ident()
					if !ok {
						return ParsedDDL{}
					}
					names = append(names, n)
					if p.punct(')') {
						break
					}
					if !p.punct(',') {
						return ParsedDDL{}
					}
				}
			} else {
				return ParsedDDL{}
			}
			for _, n := range names {
				alters = append(alters, Alteration{Kind: AlterDrop, Column: ColumnDef{Name: n}})
			}
			p.skipClause()
		case p.word("RENAME"):
			if !p.word("COLUMN") {
				if p.word("CONSTRAINT") {
					return ParsedDDL{Understood: true, Alters: alters}
				}
				return ParsedDDL{} // RENAME TO renames the table itself
			}
			from, ok1 := p.ident()
			ok2 := p.word("TO")
			to, ok3 := p.ident()
			if !ok1 || !ok2 || !ok3 {
				return ParsedDDL{}
			}
			alters = append(alters, Alteration{Kind: AlterRename, Column: ColumnDef{Name: from}, NewName: to})
		default:
			if len(alters) == 0 {
				return ParsedDDL{}
			}
		}
		if p.punct(',') {
			continue
		}
		p.punct(';')
		if p.i >= len(p.toks) {
			return ParsedDDL{Understood: true, Alters: alters}
		}
		if !(p.peek().text == "ADD" || p.peek().text == "DROP" || p.peek().text == "MODIFY" || p.peek().text == "RENAME") {
			return ParsedDDL{}
		}
	}
}

// noColumnWords start the ALTER TABLE clauses that change storage,
// logging, row movement, triggers, constraints' state or caching, and no
// column. Data Streams need not refresh a table's metadata after them, so
// DML that waited for the refresh waited for nothing: each row until a
// hold limit, the table's checkpoints pushed out by as much. ROW
// ARCHIVAL and NO ROW ARCHIVAL are left out: they add and drop a hidden
// column.
var noColumnWords = map[string]bool{
	"ENABLE": true, "DISABLE": true, "MOVE": true, "SHRINK": true, "LOGGING": true, "NOLOGGING": true,
	"PARALLEL": true, "NOPARALLEL": true, "CACHE": true, "NOCACHE": true, "COMPRESS": true, "NOCOMPRESS": true,
	"ALLOCATE": true, "DEALLOCATE": true, "READ": true, "PCTFREE": true, "PCTUSED": true,
	"INITRANS": true, "MAXTRANS": true, "STORAGE": true, "FLASHBACK": true,
	"SPLIT": true, "MERGE": true, "EXCHANGE": true, "COALESCE": true, "TRUNCATE": true,
}

// noColumnClause reports whether the ALTER TABLE at p changes no column:
// it starts with one of noColumnWords or works on partitions (ADD, DROP,
// MODIFY, RENAME ... PARTITION), and names no column (COLUMN, COLUMNS).
func (p *ddlParser) noColumnClause() bool {
	first := p.peek()
	if first.quoted || first.punct != 0 {
		return false
	}
	partitions := p.i+1 < len(p.toks) && !p.toks[p.i+1].quoted &&
		(p.toks[p.i+1].text == "PARTITION" || p.toks[p.i+1].text == "SUBPARTITION")
	if !noColumnWords[first.text] && !partitions {
		return false
	}
	for _, t := range p.toks[p.i:] {
		if !t.quoted && (t.text == "COLUMN" || t.text == "COLUMNS") {
			return false
		}
	}
	return true
}

func (p *ddlParser) constraintStart() bool {
	for _, w := range []string{"CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "SUPPLEMENTAL"} {
		if p.word(w) {
			return true
		}
	}
	return false
}

// skipClause skips words such as CASCADE CONSTRAINTS after a DROP.
func (p *ddlParser) skipClause() {
	for p.peek().punct == 0 && p.peek().text != "" && p.peek().text != "ADD" && p.peek().text != "DROP" && p.peek().text != "MODIFY" && p.peek().text != "RENAME" {
		p.i++
	}
}

func (p *ddlParser) columnsOneOrList(typeOptional bool) ([]ColumnDef, bool) {
	if p.peek().punct == '(' {
		return p.columnList(typeOptional)
	}
	c, ok := p.columnDef(typeOptional)
	if !ok {
		return nil, false
	}
	return []ColumnDef{c}, true
}

// columnList parses "(col type ..., col type ..., [constraint ...])".
func (p *ddlParser) columnList(typeOptional bool) ([]ColumnDef, bool) {
	if !p.punct('(') {
		return nil, false
	}
	var cols []ColumnDef
	for {
		if p.constraintStart() {
			p.skipToDepth0()
		} else {
			c, ok := p.columnDef(typeOptional)
			if !ok {
				return nil, false
			}
			cols = append(cols, c)
		}
		if p.punct(')') {
			return cols, true
		}
		if !p.punct(',') {
			return nil, false
		}
	}
}

// skipToDepth0 skips to the next ',' or ')' outside parentheses.
func (p *ddlParser) skipToDepth0() {
	depth := 0
	for p.i < len(p.toks) {
		switch p.peek().punct {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return
			}
			depth--
		case ',':
			if depth == 0 {
				return
			}
		}
		p.i++
	}
}

var columnStopWords = map[string]bool{"DEFAULT": true, "NOT": true, "NULL": true, "CONSTRAINT": true, "PRIMARY": true,
	"UNIQUE": true, "CHECK": true, "REFERENCES": true, "ENCRYPT": true, "INVISIBLE": true, "VISIBLE": true,
	"GENERATED": true, "COLLATE": true, "ENABLE": true, "DISABLE": true}

// alterClauseWords start the next clause of an ALTER TABLE; no column type
// or constraint contains them.
var alterClauseWords = map[string]bool{"ADD": true, "DROP": true, "MODIFY": true, "RENAME": true}

func (p *ddlParser) columnDef(typeOptional bool) (ColumnDef, bool) {
	name, ok := p.ident()
	if !ok {
		return ColumnDef{}, false
	}
	c := ColumnDef{Name: name}
	var typ strings.Builder
	depth := 0
	for p.i < len(p.toks) {
		t := p.peek()
		if depth == 0 && (t.punct == ',' || t.punct == ')' || t.punct == ';') {
			break
		}
		if depth == 0 && t.punct == 0 && !t.quoted && (columnStopWords[t.text] || alterClauseWords[t.text]) {
			break
		}
		switch t.punct {
		case '(':
			depth++
			typ.WriteByte('(')
		case ')':
			depth--
			typ.WriteByte(')')
		case ',':
			typ.WriteByte(',')
		case '*':
			typ.WriteByte('*')
		case 0:
			if typ.Len() > 0 && !strings.HasSuffix(typ.String(), "(") && !strings.HasSuffix(typ.String(), ",") {
				typ.WriteByte(' ')
			}
			typ.WriteString(t.text)
		}
		p.i++
	}
	c.SQLType = typ.String()
	if c.SQLType == "" && !typeOptional {
		return ColumnDef{}, false
	}
	// Constraints and defaults: only NULL / NOT NULL matter here.
	depth = 0
	for p.i < len(p.toks) {
		t := p.peek()
		if depth == 0 && (t.punct == ',' || t.punct == ')' || t.punct == ';') {
			break
		}
		if depth == 0 && t.punct == 0 && !t.quoted && alterClauseWords[t.text] {
			break // the next clause of an ALTER TABLE: ADD A NUMBER DROP COLUMN B
		}
		switch {
		case t.punct == '(':
			depth++
		case t.punct == ')':
			depth--
		case t.text == "NOT" && !t.quoted && p.i+1 < len(p.toks) && p.toks[p.i+1].text == "NULL":
			f := false
			c.Nullable = &f
			p.i++
		case t.text == "NULL" && !t.quoted:
			tr := true
			c.Nullable = &tr
		}
		p.i++
	}
	return c, true
}

// SQLTypeOf maps an Oracle column type to a lake type. ok is false for a
// type that says nothing more precise than the metadata's primitive (a bare
// NUMBER, or RAW/BLOB whose JSON encoding depends on the source setup).
func SQLTypeOf(sqlType string) (t Type, primitive string, ok bool) {
	name, args := splitType(strings.ToUpper(sqlType))
	switch name {
	case "NUMBER", "NUMERIC", "DECIMAL", "DEC":
		if len(args) == 0 || (len(args) == 1 && args[0] == "*") {
			return Type{}, "number", false // floating point, any scale
		}
		p, errP := strconv.Atoi(args[0])
		if args[0] == "*" {
			p, errP = MaxDecimalPrecision, nil
		}
		s := 0
		if len(args) > 1 {
			var err error
			if s, err = strconv.Atoi(args[1]); err != nil {
				return Type{}, "number", false
			}
		}
		if errP != nil {
			return Type{}, "number", false
		}
		if s == 0 && p <= 18 {
			return Type{Kind: KindInt64}, "number", true
		}
		d, err := Decimal(p, s)
		if err != nil {
			return Type{}, "number", false
		}
		return d, "number", true
	case "INTEGER", "INT", "SMALLINT":
		return Type{Kind: KindDecimal, Precision: MaxDecimalPrecision}, "number", true
	case "FLOAT", "BINARY_FLOAT", "BINARY_DOUBLE", "DOUBLE PRECISION", "REAL", "DOUBLE":
		return Type{Kind: KindFloat64}, "number", true
	case "DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH LOCAL TIME ZONE":
		if finerThanMicros(sqlType) {
			// TIMESTAMP(9): more digits than the lake's timestamps hold;
			// the exact text rather than values refused.
			return Type{Kind: KindString}, "string", true
		}
		return Type{Kind: KindTimestamp}, "string", true
	case "BOOLEAN":
		return Type{Kind: KindBoolean}, "boolean", true
	case "VARCHAR2", "NVARCHAR2", "VARCHAR", "CHAR", "NCHAR", "CLOB", "NCLOB", "LONG", "ROWID", "UROWID", "CHARACTER", "CHAR VARYING", "CHARACTER VARYING":
		return Type{Kind: KindString}, "string", true
	}
	return Type{}, "string", false
}

// MicroDigits is how many fractional digits of a second the lake's
// timestamps hold (microseconds: the finest Spark reads).
const MicroDigits = 6

// finerThanMicros reports whether a Qlik or SQL type is a timestamp with
// more fractional digits than the lake's timestamps hold.
func finerThanMicros(sourceType string) bool {
	name, args := splitType(strings.ToUpper(sourceType))
	switch name {
	case "DATETIME", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH LOCAL TIME ZONE":
		return fractionDigits(args) > MicroDigits
	}
	return false
}

// fractionDigits is the fractional-second precision of a timestamp type's
// arguments (TIMESTAMP(9): 9), 0 when it has none or they are not one
// number.
func fractionDigits(args []string) int {
	if len(args) != 1 {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(args[0]))
	if err != nil {
		return 0
	}
	return n
}

// splitType splits "TIMESTAMP(6) WITH TIME ZONE" into its name without the
// arguments ("TIMESTAMP WITH TIME ZONE") and the arguments (["6"]).
func splitType(s string) (string, []string) {
	var name strings.Builder
	var args []string
	for s != "" {
		open := strings.IndexByte(s, '(')
		if open < 0 {
			name.WriteString(s)
			break
		}
		name.WriteString(s[:open])
		close := strings.IndexByte(s[open:], ')')
		if close < 0 {
			break
		}
		for _, a := range strings.Split(s[open+1:open+close], ",") {
			a = strings.TrimSpace(a)
			a = strings.TrimSuffix(strings.TrimSuffix(a, " BYTE"), " CHAR")
			args = append(args, a)
		}
		s = s[open+close+1:]
	}
	return strings.Join(strings.Fields(name.String()), " "), args
}
