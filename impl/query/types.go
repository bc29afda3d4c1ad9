package query

import (
	"fmt"
	"strconv"
	"strings"
)

// kind is the DuckDB type of a result column or of a nested element, as far
// as encoding cares.
type kind uint8

// Kinds. kindOther covers types the encoders handle from the Go value alone.
const (
	kindOther kind = iota
	kindBool
	kindInt8
	kindInt16
	kindInt32
	kindInt64
	kindUint8
	kindUint16
	kindUint32
	kindUint64
	kindHugeint
	kindUhugeint
	kindBignum
	kindFloat
	kindDouble
	kindDecimal
	kindVarchar
	kindJSON
	kindEnum
	kindBlob
	kindGeometry
	kindBit
	kindUUID
	kindDate
	kindTime
	kindTimeTZ
	kindTimestamp
	kindTimestampS
	kindTimestampMS
	kindTimestampNS
	kindTimestampTZ
	kindInterval
	kindList
	kindArray
	kindStruct
	kindMap
	kindUnion
	kindNull
)

// typeNode describes a (possibly nested) DuckDB type.
type typeNode struct {
	kind  kind
	name  string // the DuckDB type name, as reported by the driver
	width int    // DECIMAL
	scale int    // DECIMAL
	size  int    // ARRAY
	elem  *typeNode
	key   *typeNode // MAP
	value *typeNode // MAP
	// fields are STRUCT fields or UNION members, in declaration order.
	fields []field
}

type field struct {
	name string
	typ  *typeNode
}

var simpleKinds = map[string]kind{
	"BOOLEAN":      kindBool,
	"TINYINT":      kindInt8,
	"SMALLINT":     kindInt16,
	"INTEGER":      kindInt32,
	"BIGINT":       kindInt64,
	"UTINYINT":     kindUint8,
	"USMALLINT":    kindUint16,
	"UINTEGER":     kindUint32,
	"UBIGINT":      kindUint64,
	"HUGEINT":      kindHugeint,
	"UHUGEINT":     kindUhugeint,
	"BIGNUM":       kindBignum,
	"VARINT":       kindBignum,
	"FLOAT":        kindFloat,
	"DOUBLE":       kindDouble,
	"VARCHAR":      kindVarchar,
	"JSON":         kindJSON,
	"ENUM":         kindEnum,
	"BLOB":         kindBlob,
	"GEOMETRY":     kindGeometry,
	"BIT":          kindBit,
	"UUID":         kindUUID,
	"DATE":         kindDate,
	"TIME":         kindTime,
	"TIMETZ":       kindTimeTZ,
	"TIMESTAMP":    kindTimestamp,
	"TIMESTAMP_S":  kindTimestampS,
	"TIMESTAMP_MS": kindTimestampMS,
	"TIMESTAMP_NS": kindTimestampNS,
	"TIMESTAMPTZ":  kindTimestampTZ,
	"INTERVAL":     kindInterval,
	"SQLNULL":      kindNull,
	"DECIMAL":      kindDecimal,
	"STRUCT":       kindStruct,
	"MAP":          kindMap,
	"UNION":        kindUnion,
	"LIST":         kindList,
	"ARRAY":        kindArray,
	// Spellings DuckDB itself uses.
	"TIME WITH TIME ZONE":      kindTimeTZ,
	"TIMESTAMP WITH TIME ZONE": kindTimestampTZ,
}

// parseType parses a type name as the DuckDB driver reports it
// (ColumnTypeDatabaseTypeName): `INTEGER`, `DECIMAL(18,3)`, `VARCHAR[]`,
// `INTEGER[3]`, `STRUCT("a" INTEGER, "b" VARCHAR)`, `MAP(VARCHAR, INTEGER)`,
// `UNION("n" VARCHAR, "a" SMALLINT)`, `ENUM`, `JSON` ... A name it does not
// understand yields kindOther; the encoders then go by the Go value alone.
func parseType(s string) *typeNode {
	p := typeParser{s: s}
	t, err := p.parse()
	if err != nil || p.pos != len(p.s) {
		return &typeNode{kind: kindOther, name: s}
	}
	return t
}

type typeParser struct {
	s   string
	pos int
}

func (p *typeParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *typeParser) expect(tok string) error {
	if !strings.HasPrefix(p.s[p.pos:], tok) {
		return fmt.Errorf("expected %q at %d", tok, p.pos)
	}
	p.pos += len(tok)
	return nil
}

func (p *typeParser) skipSpaces() {
	for p.peek() == ' ' {
		p.pos++
	}
}

func (p *typeParser) parse() (*typeNode, error) {
	start := p.pos
	p.skipSpaces()
	// The base name runs to the first delimiter.
	nameStart := p.pos
	for p.pos < len(p.s) && !strings.ContainsRune("([,)]", rune(p.s[p.pos])) {
		p.pos++
	}
	base := strings.TrimSpace(p.s[nameStart:p.pos])
	k, ok := simpleKinds[strings.ToUpper(base)]
	if !ok {
		k = kindOther
	}
	t := &typeNode{kind: k}
	if p.peek() == '(' {
		p.pos++
		var err error
		switch k {
		case kindDecimal:
			err = p.parseDecimal(t)
		case kindStruct, kindUnion:
			err = p.parseFields(t)
		case kindMap:
			err = p.parseMap(t)
		default:
			err = p.skipParens()
		}
		if err != nil {
			return nil, err
		}
	}
	// Suffixes: [] is a LIST, [n] an ARRAY, applied left to right.
	for p.peek() == '[' {
		t.name = strings.TrimSpace(p.s[start:p.pos])
		p.pos++
		end := strings.IndexByte(p.s[p.pos:], ']')
		if end < 0 {
			return nil, fmt.Errorf("unterminated [ at %d", p.pos)
		}
		inner := p.s[p.pos : p.pos+end]
		p.pos += end + 1
		if inner == "" {
			t = &typeNode{kind: kindList, elem: t}
		} else {
			n, err := strconv.Atoi(inner)
			if err != nil {
				return nil, fmt.Errorf("bad array size %q", inner)
			}
			t = &typeNode{kind: kindArray, elem: t, size: n}
		}
	}
	t.name = strings.TrimSpace(p.s[start:p.pos])
	return t, nil
}

func (p *typeParser) parseDecimal(t *typeNode) error {
	end := strings.IndexByte(p.s[p.pos:], ')')
	if end < 0 {
		return fmt.Errorf("unterminated DECIMAL")
	}
	w, s, ok := strings.Cut(p.s[p.pos:p.pos+end], ",")
	width, err1 := strconv.Atoi(strings.TrimSpace(w))
	scale, err2 := strconv.Atoi(strings.TrimSpace(s))
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("bad DECIMAL")
	}
	t.width, t.scale = width, scale
	p.pos += end + 1
	return nil
}

// parseFields parses `"name" TYPE, "name" TYPE)`.
func (p *typeParser) parseFields(t *typeNode) error {
	for {
		p.skipSpaces()
		name, err := p.parseName()
		if err != nil {
			return err
		}
		ft, err := p.parse()
		if err != nil {
			return err
		}
		t.fields = append(t.fields, field{name: name, typ: ft})
		p.skipSpaces()
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
			p.pos++
			return nil
		default:
			return fmt.Errorf("expected , or ) at %d", p.pos)
		}
	}
}

// parseName parses a field name: "quoted" with "" as an escaped quote, or a
// bare identifier.
func (p *typeParser) parseName() (string, error) {
	if p.peek() != '"' {
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] != ' ' {
			p.pos++
		}
		if p.pos == start {
			return "", fmt.Errorf("expected a field name at %d", p.pos)
		}
		return p.s[start:p.pos], nil
	}
	p.pos++
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		p.pos++
		if c == '"' {
			if p.peek() == '"' {
				b.WriteByte('"')
				p.pos++
				continue
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
	return "", fmt.Errorf("unterminated field name")
}

func (p *typeParser) parseMap(t *typeNode) error {
	k, err := p.parse()
	if err != nil {
		return err
	}
	if err := p.expect(","); err != nil {
		return err
	}
	v, err := p.parse()
	if err != nil {
		return err
	}
	if err := p.expect(")"); err != nil {
		return err
	}
	t.key, t.value = k, v
	return nil
}

func (p *typeParser) skipParens() error {
	depth := 1
	inQuote := false
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		p.pos++
		switch {
		case c == '\'':
			inQuote = !inQuote
		case inQuote:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("unterminated (")
}

// stringKeyed reports whether MAP keys of this type encode as JSON object
// keys (VARCHAR and ENUM keys do).
func (t *typeNode) stringKeyed() bool {
	return t != nil && (t.kind == kindVarchar || t.kind == kindEnum)
}

// child returns the element type of a LIST or ARRAY, or nil.
func (t *typeNode) child() *typeNode {
	if t == nil {
		return nil
	}
	return t.elem
}
