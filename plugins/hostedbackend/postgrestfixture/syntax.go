package postgrestfixture

import (
	"fmt"
	"strconv"
	"strings"
)

// This file parses the subset of PostgREST's URL grammar the fixture serves:
//
//	select=*            select=a,alias:b,c::text
//	order=a.asc,b.desc.nullsfirst,"odd,name".asc
//	col=[not.]op.value  op ∈ eq neq gt gte lt lte like ilike is in
//	or=(a.gt.1,and(a.eq.1,b.gt."x,y"))  and=(…)  not.or=(…)  not.and=(…)
//	limit=N  offset=N   (and the Range / Range-Unit headers, see fixture.go)
//
// Names and values may be double-quoted, with \" and \\ escapes, where the
// grammar reserves characters (commas, dots, colons, parentheses).

// syntaxError is PostgREST's PGRST100 "failed to parse" error.
type syntaxError struct{ msg, details string }

func (e *syntaxError) Error() string { return e.msg + ": " + e.details }

func parseErr(what, details string, args ...any) error {
	return &syntaxError{msg: "\"failed to parse " + what + "\"", details: fmt.Sprintf(details, args...)}
}

// selectItem is one entry of select=.
type selectItem struct {
	star  bool
	col   string
	alias string
	cast  string
}

// orderItem is one entry of order=.
type orderItem struct {
	col   string
	desc  bool
	nulls string // "", "first", "last"
}

// cond is a filter tree: a leaf (col/op/values) or a logic node.
type cond struct {
	not bool
	// logic node
	logic    string // "and", "or"; empty for a leaf
	children []*cond
	// leaf
	col    string
	op     string
	values []string
}

// scanner walks a parameter value.
type scanner struct {
	s   string
	pos int
}

func (sc *scanner) eof() bool  { return sc.pos >= len(sc.s) }
func (sc *scanner) peek() byte { return sc.s[sc.pos] }

// quoted reads a double-quoted token starting at the current '"'.
func (sc *scanner) quoted() (string, error) {
	var b strings.Builder
	sc.pos++ // opening quote
	for sc.pos < len(sc.s) {
		c := sc.s[sc.pos]
		switch c {
		case '\\':
			if sc.pos+1 >= len(sc.s) {
				return "", fmt.Errorf("unterminated escape at %d", sc.pos)
			}
			b.WriteByte(sc.s[sc.pos+1])
			sc.pos += 2
		case '"':
			sc.pos++
			return b.String(), nil
		default:
			b.WriteByte(c)
			sc.pos++
		}
	}
	return "", fmt.Errorf("unterminated quote")
}

// until reads an unquoted token up to one of the stop bytes (not consumed).
func (sc *scanner) until(stops string) string {
	start := sc.pos
	for sc.pos < len(sc.s) && !strings.ContainsRune(stops, rune(sc.s[sc.pos])) {
		sc.pos++
	}
	return sc.s[start:sc.pos]
}

// name reads a possibly quoted identifier.
func (sc *scanner) name(stops string) (string, error) {
	if !sc.eof() && sc.peek() == '"' {
		return sc.quoted()
	}
	n := sc.until(stops)
	if n == "" {
		return "", fmt.Errorf("empty name at %d", sc.pos)
	}
	return n, nil
}

func (sc *scanner) expect(c byte) error {
	if sc.eof() || sc.peek() != c {
		return fmt.Errorf("expected %q at %d", c, sc.pos)
	}
	sc.pos++
	return nil
}

func parseSelect(v string) ([]selectItem, error) {
	if strings.TrimSpace(v) == "" || v == "*" {
		return []selectItem{{star: true}}, nil
	}
	sc := &scanner{s: v}
	var items []selectItem
	for {
		if !sc.eof() && sc.peek() == '*' {
			sc.pos++
			items = append(items, selectItem{star: true})
		} else {
			n, err := sc.name(",:")
			if err != nil {
				return nil, parseErr("select parameter ("+v+")", "%v", err)
			}
			it := selectItem{col: n}
			if !sc.eof() && sc.peek() == ':' && !strings.HasPrefix(sc.s[sc.pos:], "::") {
				sc.pos++
				it.alias = n
				if it.col, err = sc.name(",:"); err != nil {
					return nil, parseErr("select parameter ("+v+")", "%v", err)
				}
			}
			if strings.HasPrefix(sc.s[sc.pos:], "::") {
				sc.pos += 2
				it.cast = sc.until(",")
				if !isSimpleType(it.cast) {
					return nil, parseErr("select parameter ("+v+")", "unsupported cast %q", it.cast)
				}
			}
			if strings.Contains(it.col, "(") || strings.Contains(it.col, "->") {
				return nil, parseErr("select parameter ("+v+")", "embedding and JSON paths are not supported by this fixture")
			}
			items = append(items, it)
		}
		if sc.eof() {
			return items, nil
		}
		if err := sc.expect(','); err != nil {
			return nil, parseErr("select parameter ("+v+")", "%v", err)
		}
	}
}

// isSimpleType accepts cast targets that are plain type names.
func isSimpleType(t string) bool {
	if t == "" {
		return false
	}
	for _, c := range t {
		if !(c == '_' || c == ' ' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func parseOrder(v string) ([]orderItem, error) {
	sc := &scanner{s: v}
	var items []orderItem
	for {
		n, err := sc.name(",.")
		if err != nil {
			return nil, parseErr("order ("+v+")", "%v", err)
		}
		it := orderItem{col: n}
		for !sc.eof() && sc.peek() == '.' {
			sc.pos++
			switch w := sc.until(",."); w {
			case "asc":
				it.desc = false
			case "desc":
				it.desc = true
			case "nullsfirst":
				it.nulls = "first"
			case "nullslast":
				it.nulls = "last"
			default:
				return nil, parseErr("order ("+v+")", "unexpected %q", w)
			}
		}
		items = append(items, it)
		if sc.eof() {
			return items, nil
		}
		if err := sc.expect(','); err != nil {
			return nil, parseErr("order ("+v+")", "%v", err)
		}
	}
}

var operators = map[string]bool{"eq": true, "neq": true, "gt": true, "gte": true, "lt": true, "lte": true, "like": true, "ilike": true, "is": true, "in": true}

// parseFilter parses the value of a col=… parameter (outside logic trees the
// value runs to the end of the parameter).
func parseFilter(col, v string) (*cond, error) {
	c := &cond{col: col}
	rest := v
	if strings.HasPrefix(rest, "not.") {
		c.not = true
		rest = rest[4:]
	}
	dot := strings.IndexByte(rest, '.')
	if dot < 0 {
		return nil, parseErr("filter ("+v+")", "missing operator")
	}
	c.op, rest = rest[:dot], rest[dot+1:]
	if !operators[c.op] {
		return nil, parseErr("filter ("+v+")", "unknown or unsupported operator %q", c.op)
	}
	if c.op == "in" {
		sc := &scanner{s: rest}
		vals, err := sc.list()
		if err != nil || !sc.eof() {
			return nil, parseErr("filter ("+v+")", "bad in list")
		}
		c.values = vals
		return c, nil
	}
	if len(rest) >= 2 && rest[0] == '"' && rest[len(rest)-1] == '"' {
		sc := &scanner{s: rest}
		if q, err := sc.quoted(); err == nil && sc.eof() {
			rest = q
		}
	}
	c.values = []string{rest}
	return c, nil
}

// list reads "(a,"b,c",d)".
func (sc *scanner) list() ([]string, error) {
	if err := sc.expect('('); err != nil {
		return nil, err
	}
	var vals []string
	if !sc.eof() && sc.peek() == ')' {
		sc.pos++
		return vals, nil
	}
	for {
		var v string
		var err error
		if !sc.eof() && sc.peek() == '"' {
			v, err = sc.quoted()
			if err != nil {
				return nil, err
			}
		} else {
			v = sc.until(",)")
		}
		vals = append(vals, v)
		if sc.eof() {
			return nil, fmt.Errorf("unterminated list")
		}
		if sc.peek() == ')' {
			sc.pos++
			return vals, nil
		}
		sc.pos++ // ','
	}
}

// parseLogic parses the value of or=/and= (key gives the operator and an
// optional not.).
func parseLogic(key, v string) (*cond, error) {
	c := &cond{}
	if strings.HasPrefix(key, "not.") {
		c.not = true
		key = key[4:]
	}
	c.logic = key
	sc := &scanner{s: v}
	children, err := sc.logicList()
	if err != nil {
		return nil, parseErr("logic tree ("+v+")", "%v", err)
	}
	if !sc.eof() {
		return nil, parseErr("logic tree ("+v+")", "unexpected %q at %d", sc.s[sc.pos:], sc.pos)
	}
	c.children = children
	return c, nil
}

// logicList reads "(item,item,…)".
func (sc *scanner) logicList() ([]*cond, error) {
	if err := sc.expect('('); err != nil {
		return nil, err
	}
	var items []*cond
	for {
		it, err := sc.logicItem()
		if err != nil {
			return nil, err
		}
		items = append(items, it)
		if sc.eof() {
			return nil, fmt.Errorf("unterminated logic tree")
		}
		if sc.peek() == ')' {
			sc.pos++
			return items, nil
		}
		if err := sc.expect(','); err != nil {
			return nil, err
		}
	}
}

func (sc *scanner) logicItem() (*cond, error) {
	c := &cond{}
	rest := sc.s[sc.pos:]
	if strings.HasPrefix(rest, "not.and(") || strings.HasPrefix(rest, "not.or(") {
		c.not = true
		sc.pos += 4
		rest = sc.s[sc.pos:]
	}
	for _, l := range []string{"and", "or"} {
		if strings.HasPrefix(rest, l+"(") {
			sc.pos += len(l)
			c.logic = l
			children, err := sc.logicList()
			if err != nil {
				return nil, err
			}
			c.children = children
			return c, nil
		}
	}
	col, err := sc.name(".,)")
	if err != nil {
		return nil, err
	}
	c.col = col
	if err := sc.expect('.'); err != nil {
		return nil, err
	}
	op := sc.until(".,)")
	if op == "not" {
		c.not = !c.not
		if err := sc.expect('.'); err != nil {
			return nil, err
		}
		op = sc.until(".,)")
	}
	if !operators[op] {
		return nil, fmt.Errorf("unknown or unsupported operator %q", op)
	}
	c.op = op
	if err := sc.expect('.'); err != nil {
		return nil, err
	}
	switch {
	case op == "in":
		vals, err := sc.list()
		if err != nil {
			return nil, err
		}
		c.values = vals
	case !sc.eof() && sc.peek() == '"':
		v, err := sc.quoted()
		if err != nil {
			return nil, err
		}
		c.values = []string{v}
	default:
		c.values = []string{sc.until(",)")}
	}
	return c, nil
}

// parseRangeHeader parses "0-999", "10-" or "items=0-999".
func parseRangeHeader(v string) (lo, hi int64, ok bool) {
	v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "items="))
	dash := strings.IndexByte(v, '-')
	if dash <= 0 {
		return 0, 0, false
	}
	lo, err := strconv.ParseInt(v[:dash], 10, 64)
	if err != nil || lo < 0 {
		return 0, 0, false
	}
	if v[dash+1:] == "" {
		return lo, -1, true
	}
	hi, err = strconv.ParseInt(v[dash+1:], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return lo, hi, true
}
