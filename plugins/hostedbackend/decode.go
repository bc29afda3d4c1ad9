package hostedbackend

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// appendFunc reads the next JSON value and appends it to a builder.
type appendFunc func(lx *lexer) error

// rowDecoder turns a PostgREST JSON array of row objects into Arrow record
// batches. It reads the body as a stream (see lexer) and holds at most one
// batch of rows; numbers are parsed from their exact text.
type rowDecoder struct {
	schema   *arrow.Schema
	builders []array.Builder
	appends  []appendFunc
	index    map[string]int
	seen     []int    // sequence number of the row in which each column was last set
	seq      int      // sequence number of the current row
	rows     int      // rows in the builders
	maxRows  int      // flush threshold
	pkCols   []int    // columns of the keyset cursor
	lastKey  [][]byte // text of the key columns of the last row
	lastNull bool     // a key column of the last row was null
	scratch  []byte
}

func newRowDecoder(mem memory.Allocator, schema *arrow.Schema, maxRows int, pk []string) (*rowDecoder, error) {
	d := &rowDecoder{
		schema:  schema,
		index:   make(map[string]int, schema.NumFields()),
		seen:    make([]int, schema.NumFields()),
		maxRows: maxRows,
	}
	for _, k := range pk {
		i := schema.FieldIndices(k)
		if len(i) != 1 {
			return nil, fmt.Errorf("primary key column %q is not in the schema", k)
		}
		d.pkCols = append(d.pkCols, i[0])
	}
	d.lastKey = make([][]byte, len(d.pkCols))
	for i, f := range schema.Fields() {
		b := array.NewBuilder(mem, f.Type)
		b.Reserve(maxRows)
		d.builders = append(d.builders, b)
		kind, isList := kindOfField(f)
		var app appendFunc
		if isList {
			lb, ok := b.(*array.ListBuilder)
			if !ok {
				d.release()
				return nil, fmt.Errorf("column %q: unsupported list type %s", f.Name, f.Type)
			}
			app = listAppender(lb, scalarAppender(kind, lb.ValueBuilder(), d, nil))
		} else {
			app = scalarAppender(kind, b, d, d.keyCapture(i))
		}
		name := f.Name
		d.appends = append(d.appends, func(lx *lexer) error {
			if err := app(lx); err != nil {
				return fmt.Errorf("column %q: %w", name, err)
			}
			return nil
		})
		d.index[f.Name] = i
	}
	return d, nil
}

func (d *rowDecoder) release() {
	for _, b := range d.builders {
		b.Release()
	}
	d.builders = nil
}

// reset drops the rows decoded since the last flush (a page that failed
// half-way and will be asked for again).
func (d *rowDecoder) reset() {
	if d.rows == 0 {
		return
	}
	for _, b := range d.builders {
		b.NewArray().Release()
		b.Reserve(d.maxRows)
	}
	d.rows = 0
}

// flush returns the buffered rows as a record batch (nil when empty).
func (d *rowDecoder) flush() arrow.RecordBatch {
	if d.rows == 0 {
		return nil
	}
	cols := make([]arrow.Array, len(d.builders))
	for i, b := range d.builders {
		cols[i] = b.NewArray()
	}
	rec := array.NewRecordBatch(d.schema, cols, int64(d.rows))
	for _, c := range cols {
		c.Release()
	}
	for _, b := range d.builders {
		b.Reserve(d.maxRows)
	}
	d.rows = 0
	return rec
}

// errMalformed marks a body that is not what PostgREST sends.
func errMalformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// decodePage decodes one response body. onFull is called with a batch
// whenever maxRows rows are buffered, and after the last row (the batch
// ownership passes to onFull). It returns the number of rows in the body.
// A body that breaks off yields an error for which isBodyReadError is true.
func (d *rowDecoder) decodePage(body io.Reader, onFull func(arrow.RecordBatch) error) (int, error) {
	lx := newLexer(body)
	n, err := d.decodeRows(lx, onFull)
	if err != nil {
		var se *errSyntax
		if errors.As(err, &se) {
			return n, fmt.Errorf("%w: %w", ErrProtocol, err)
		}
		return n, err
	}
	if rec := d.flush(); rec != nil {
		if err := onFull(rec); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (d *rowDecoder) decodeRows(lx *lexer, onFull func(arrow.RecordBatch) error) (int, error) {
	if err := lx.expect('['); err != nil {
		return 0, err
	}
	n := 0
	if c, err := lx.peek(); err != nil {
		return 0, err
	} else if c == ']' {
		lx.pos++
		return 0, d.expectEOF(lx)
	}
	for {
		if err := lx.expect('{'); err != nil {
			return n, err
		}
		d.seq++
		row := d.seq
		d.lastNull = false
		if c, err := lx.peek(); err != nil {
			return n, err
		} else if c == '}' {
			lx.pos++
		} else {
			for {
				if c, err := lx.peek(); err != nil {
					return n, err
				} else if c != '"' {
					return n, lx.syntax("expected a column name")
				}
				key, err := lx.str()
				if err != nil {
					return n, err
				}
				i, ok := d.index[string(key)]
				if err := lx.expect(':'); err != nil {
					return n, err
				}
				if !ok || d.seen[i] == row {
					// A column not in the schema (added after discovery)
					// or a duplicate key: skip its value.
					if err := lx.skip(0); err != nil {
						return n, err
					}
				} else {
					if err := d.appends[i](lx); err != nil {
						return n, err
					}
					d.seen[i] = row
				}
				more, err := lx.next('}')
				if err != nil {
					return n, err
				}
				if !more {
					break
				}
			}
		}
		for i, s := range d.seen {
			if s != row {
				d.builders[i].AppendNull()
				d.seen[i] = row
				for _, k := range d.pkCols {
					if k == i {
						d.lastNull = true
					}
				}
			}
		}
		d.rows++
		n++
		if d.rows >= d.maxRows {
			if err := onFull(d.flush()); err != nil {
				return n, err
			}
		}
		more, err := lx.next(']')
		if err != nil {
			return n, err
		}
		if !more {
			return n, d.expectEOF(lx)
		}
	}
}

func (d *rowDecoder) expectEOF(lx *lexer) error {
	eof, err := lx.atEOF()
	if err != nil {
		return err
	}
	if !eof {
		return lx.syntax("data after the JSON array of rows")
	}
	return nil
}

// keyCapture records the text of a primary-key column of the current row.
func (d *rowDecoder) keyCapture(col int) func([]byte, bool) {
	for j, k := range d.pkCols {
		if k == col {
			return func(v []byte, null bool) {
				d.lastKey[j] = append(d.lastKey[j][:0], v...)
				if null {
					d.lastNull = true
				}
			}
		}
	}
	return nil
}

func wrongType(kind tokKind, want string) error {
	names := map[tokKind]string{tokNull: "null", tokString: "a string", tokNumber: "a number",
		tokTrue: "true", tokFalse: "false", tokArray: "an array", tokObject: "an object"}
	if kind == tokArray && want != "an array" {
		return errMalformed("got an array where %s was expected (multi-dimensional arrays are not supported)", want)
	}
	return errMalformed("expected %s, got %s", want, names[kind])
}

// scalarAppender returns the function that decodes one value of the given
// kind into b. capture, when not nil, receives the value's text (for the
// keyset cursor).
func scalarAppender(kind colKind, b array.Builder, d *rowDecoder, capture func([]byte, bool)) appendFunc {
	switch kind {
	case kindJSON, kindText:
		sb := b.(*array.StringBuilder)
		isJSON := kind == kindJSON
		return func(lx *lexer) error {
			c, err := lx.peek()
			if err != nil {
				return err
			}
			var v []byte
			switch {
			case c == 'n':
				if err := lx.literal("null"); err != nil {
					return err
				}
				sb.AppendNull()
				if capture != nil {
					capture(nil, true)
				}
				return nil
			case c == '"' && !isJSON:
				v, err = lx.str() // a plain string keeps its text
			default:
				v, err = lx.raw()
			}
			if err != nil {
				return err
			}
			sb.BinaryBuilder.Append(v)
			if capture != nil {
				capture(v, false)
			}
			return nil
		}
	}
	conv := scalarConverter(kind, b, d)
	return func(lx *lexer) error {
		tk, v, err := lx.scalar()
		if err != nil {
			return err
		}
		if capture != nil {
			capture(v, tk == tokNull)
		}
		if tk == tokNull {
			b.AppendNull()
			return nil
		}
		return conv(tk, v)
	}
}

// parseInt parses a JSON integer text exactly, without allocating on the
// common path; anything unusual goes through strconv for its checks.
func parseInt(b []byte, bits int) (int64, error) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i = 1
	}
	if i == len(b) || len(b)-i > 19 {
		return strconv.ParseInt(string(b), 10, bits)
	}
	var u uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(b), 10, bits)
		}
		u = u*10 + uint64(c-'0')
	}
	limit := uint64(1) << uint(bits-1)
	if neg {
		if u > limit {
			return strconv.ParseInt(string(b), 10, bits)
		}
		return -int64(u), nil
	}
	if u >= limit {
		return strconv.ParseInt(string(b), 10, bits)
	}
	return int64(u), nil
}

// scalarConverter returns the function appending one non-null scalar.
func scalarConverter(kind colKind, b array.Builder, d *rowDecoder) func(tokKind, []byte) error {
	str := func(tk tokKind, want string) error {
		if tk != tokString {
			return wrongType(tk, want)
		}
		return nil
	}
	switch kind {
	case kindInt16, kindInt32, kindInt64:
		bits := map[colKind]int{kindInt16: 16, kindInt32: 32, kindInt64: 64}[kind]
		parse := func(tk tokKind, v []byte) (int64, error) {
			if tk != tokNumber {
				return 0, wrongType(tk, "an integer")
			}
			n, err := parseInt(v, bits)
			if err != nil {
				return 0, errMalformed("invalid %d-bit integer %s", bits, v)
			}
			return n, nil
		}
		switch bb := b.(type) {
		case *array.Int16Builder:
			return func(tk tokKind, v []byte) error {
				n, err := parse(tk, v)
				bb.Append(int16(n))
				return err
			}
		case *array.Int32Builder:
			return func(tk tokKind, v []byte) error {
				n, err := parse(tk, v)
				bb.Append(int32(n))
				return err
			}
		case *array.Int64Builder:
			return func(tk tokKind, v []byte) error {
				n, err := parse(tk, v)
				bb.Append(n)
				return err
			}
		}
	case kindFloat32, kindFloat64:
		bits := 64
		if kind == kindFloat32 {
			bits = 32
		}
		parse := func(tk tokKind, v []byte) (float64, error) {
			switch tk {
			case tokNumber:
				f, err := strconv.ParseFloat(string(v), bits)
				if err != nil {
					return 0, errMalformed("invalid float %s", v)
				}
				return f, nil
			case tokString: // PostgreSQL's JSON of NaN and the infinities
				switch string(v) {
				case "NaN":
					return math.NaN(), nil
				case "Infinity":
					return math.Inf(1), nil
				case "-Infinity":
					return math.Inf(-1), nil
				}
			}
			return 0, wrongType(tk, "a number")
		}
		if fb, ok := b.(*array.Float32Builder); ok {
			return func(tk tokKind, v []byte) error {
				f, err := parse(tk, v)
				fb.Append(float32(f))
				return err
			}
		}
		fb := b.(*array.Float64Builder)
		return func(tk tokKind, v []byte) error {
			f, err := parse(tk, v)
			fb.Append(f)
			return err
		}
	case kindBool:
		bb := b.(*array.BooleanBuilder)
		return func(tk tokKind, v []byte) error {
			switch tk {
			case tokTrue:
				bb.Append(true)
			case tokFalse:
				bb.Append(false)
			default:
				return wrongType(tk, "a boolean")
			}
			return nil
		}
	case kindDecimal:
		db := b.(*array.Decimal128Builder)
		dt := db.Type().(*arrow.Decimal128Type)
		return func(tk tokKind, v []byte) error {
			if tk != tokNumber {
				return wrongType(tk, "a number (NaN does not fit a decimal)")
			}
			n, err := parseDecimal(string(v), dt.Precision, dt.Scale)
			if err != nil {
				return errMalformed("%v", err)
			}
			db.Append(n)
			return nil
		}
	case kindNumeric:
		sb := b.(*array.StringBuilder)
		return func(tk tokKind, v []byte) error {
			if tk != tokNumber && tk != tokString { // strings: "NaN", "Infinity"
				return wrongType(tk, "a number")
			}
			sb.BinaryBuilder.Append(v)
			return nil
		}
	case kindUUID:
		ub := b.(*extensions.UUIDBuilder)
		return func(tk tokKind, v []byte) error {
			if err := str(tk, "a uuid string"); err != nil {
				return err
			}
			u, err := parseUUID(string(v))
			if err != nil {
				return errMalformed("%v", err)
			}
			ub.AppendBytes(u)
			return nil
		}
	case kindDate:
		db := b.(*array.Date32Builder)
		return func(tk tokKind, v []byte) error {
			if err := str(tk, "a date string"); err != nil {
				return err
			}
			n, err := parseDate(string(v))
			if err != nil {
				return errMalformed("%v", err)
			}
			db.Append(arrow.Date32(n))
			return nil
		}
	case kindTime:
		tb := b.(*array.Time64Builder)
		return func(tk tokKind, v []byte) error {
			if err := str(tk, "a time string"); err != nil {
				return err
			}
			n, err := parseTime(string(v))
			if err != nil {
				return errMalformed("%v", err)
			}
			tb.Append(arrow.Time64(n))
			return nil
		}
	case kindTimestamp, kindTimestampTZ:
		tb := b.(*array.TimestampBuilder)
		withTZ := kind == kindTimestampTZ
		return func(tk tokKind, v []byte) error {
			if err := str(tk, "a timestamp string"); err != nil {
				return err
			}
			n, err := parseTimestamp(string(v), withTZ)
			if err != nil {
				return errMalformed("%v", err)
			}
			tb.Append(arrow.Timestamp(n))
			return nil
		}
	case kindInterval:
		ib := b.(*array.MonthDayNanoIntervalBuilder)
		return func(tk tokKind, v []byte) error {
			if err := str(tk, "an interval string"); err != nil {
				return err
			}
			iv, err := parseInterval(string(v))
			if err != nil {
				return errMalformed("%v", err)
			}
			ib.Append(iv)
			return nil
		}
	case kindBytea:
		bb := b.(*array.BinaryBuilder)
		return func(tk tokKind, v []byte) error {
			if err := str(tk, "a bytea string"); err != nil {
				return err
			}
			out, err := parseBytea(string(v), d.scratch[:0])
			if err != nil {
				return errMalformed("%v", err)
			}
			d.scratch = out[:0]
			bb.Append(out)
			return nil
		}
	}
	// Plain strings (text, varchar, char): a string as is; numbers and
	// booleans as their JSON text, so a mismatched server still works.
	sb := b.(*array.StringBuilder)
	return func(tk tokKind, v []byte) error {
		switch tk {
		case tokString, tokNumber:
			sb.BinaryBuilder.Append(v)
		case tokTrue:
			sb.Append("true")
		case tokFalse:
			sb.Append("false")
		default:
			return wrongType(tk, "a string")
		}
		return nil
	}
}

// listAppender decodes a JSON array (or null) into a list builder.
func listAppender(lb *array.ListBuilder, elem appendFunc) appendFunc {
	return func(lx *lexer) error {
		c, err := lx.peek()
		if err != nil {
			return err
		}
		switch c {
		case 'n':
			if err := lx.literal("null"); err != nil {
				return err
			}
			lb.AppendNull()
			return nil
		case '[':
		default:
			tk, _, err := lx.scalar()
			if err != nil {
				return err
			}
			return wrongType(tk, "an array")
		}
		lx.pos++
		lb.Append(true)
		if c, err := lx.peek(); err != nil {
			return err
		} else if c == ']' {
			lx.pos++
			return nil
		}
		for {
			if err := elem(lx); err != nil {
				return err
			}
			more, err := lx.next(']')
			if err != nil || !more {
				return err
			}
		}
	}
}
