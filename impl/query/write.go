package query

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Media types of the encodings, for the Content-Type header and Accept
// negotiation.
const (
	JSONContentType  = "application/json"
	CSVContentType   = "text/csv; charset=utf-8"
	ArrowContentType = "application/vnd.apache.arrow.stream"
)

// flushAt is the buffer size at which encoded rows are written out.
const flushAt = 32 << 10

// WriteJSON writes the spec 2.2 result object
//
//	{"columns":[...],"rows":[{...},...],"rowCount":n,"truncated":b,"executionTimeMs":x}
//
// rowCount, truncated and executionTimeMs follow the rows because they are
// known only at the end; JSON object member order carries no meaning.
// Values are encoded as the package documentation says. Rows are encoded as
// they are read (never collected as values), into a body held back until
// the last row was read (see spool.go): nothing reaches w before Truncated,
// RowCount and ExecutionTime are final, so that a caller can set response
// headers from them on w's first Write.
//
// An error with nothing written to w (a deadline or cancellation while the
// rows were read, a value that cannot be converted) leaves the caller free
// to answer with the error's status; an error after the first Write (the
// client went away, the deadline passed while sending) means the response
// is incomplete and must be aborted (see Result). WriteJSON, WriteCSV and
// WriteArrow may be called once per Result.
func (r *Result) WriteJSON(w io.Writer) error {
	sp, err := r.startWrite()
	if err != nil {
		return err
	}
	defer sp.close()
	head, err := json.Marshal(r.cols)
	if err != nil {
		return fmt.Errorf("query: encode columns: %w", err)
	}
	keys := make([][]byte, len(r.cols))
	for i, c := range r.cols {
		keys[i] = append(appendJSONString(nil, c.Name), ':')
	}
	buf := make([]byte, 0, 4096)
	buf = append(buf, `{"columns":`...)
	buf = append(buf, head...)
	buf = append(buf, `,"rows":[`...)
	for {
		ok, err := r.next()
		if err != nil {
			return r.streamErr(err)
		}
		if !ok {
			break
		}
		if r.rowCount > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, '{')
		for i, v := range r.row {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, keys[i]...)
			buf = appendJSONValue(buf, v, r.types[i])
		}
		buf = append(buf, '}')
		if len(buf) >= flushAt {
			if err := writeOut(sp, buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	r.finish()
	buf = append(buf, `],"rowCount":`...)
	buf = strconv.AppendInt(buf, int64(r.rowCount), 10)
	buf = append(buf, `,"truncated":`...)
	buf = strconv.AppendBool(buf, r.truncated)
	buf = append(buf, `,"executionTimeMs":`...)
	buf = strconv.AppendFloat(buf, float64(r.elapsed.Nanoseconds())/1e6, 'f', 3, 64)
	buf = append(buf, "}\n"...)
	if err := writeOut(sp, buf); err != nil {
		return err
	}
	return sp.sendTo(r.ctx, w)
}

// WriteCSV writes a header row of column names and then the rows, same
// limits as WriteJSON (RFC 4180 quoting, "\n" line ends). NULL is an empty
// unquoted field and the empty string is "" (as PostgreSQL's COPY CSV).
// Scalars use the text forms of the JSON encoding, without the JSON
// quoting and without the 2^53 rule; LIST, ARRAY, STRUCT, MAP, UNION and
// JSON values are their JSON text; NaN and infinities are NaN, Infinity and
// -Infinity. The truncation flag is available from Truncated when the
// first byte reaches w.
func (r *Result) WriteCSV(w io.Writer) error {
	sp, err := r.startWrite()
	if err != nil {
		return err
	}
	defer sp.close()
	buf := make([]byte, 0, 4096)
	for i, c := range r.cols {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendCSVField(buf, []byte(c.Name))
	}
	buf = append(buf, '\n')
	var scratch []byte
	for {
		ok, err := r.next()
		if err != nil {
			return r.streamErr(err)
		}
		if !ok {
			break
		}
		for i, v := range r.row {
			if i > 0 {
				buf = append(buf, ',')
			}
			if v == nil {
				continue
			}
			scratch = appendCSVText(scratch[:0], v, r.types[i])
			buf = appendCSVField(buf, scratch)
		}
		buf = append(buf, '\n')
		if len(buf) >= flushAt {
			if err := writeOut(sp, buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	r.finish()
	if err := writeOut(sp, buf); err != nil {
		return err
	}
	return sp.sendTo(r.ctx, w)
}

// writeOut adds an encoded chunk to the held body.
func writeOut(w io.Writer, buf []byte) error {
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("query: write result: %w", err)
	}
	return nil
}

// appendCSVText appends the CSV text form of a non-nil value.
func appendCSVText(b []byte, v any, t *typeNode) []byte {
	k := kindOther
	if t != nil {
		k = t.kind
	}
	if k == kindJSON {
		return appendJSONValue(b, v, t)
	}
	switch v := v.(type) {
	case string:
		return append(b, v...)
	case bool:
		return strconv.AppendBool(b, v)
	case int8:
		return strconv.AppendInt(b, int64(v), 10)
	case int16:
		return strconv.AppendInt(b, int64(v), 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float32:
		return appendCSVFloat(b, float64(v), 32)
	case float64:
		return appendCSVFloat(b, v, 64)
	case *big.Int:
		return appendBigInt(b, v)
	case duckdb.Decimal:
		return appendDecimal(b, v)
	case []byte:
		if k == kindUUID && len(v) == 16 {
			return appendUUID(b, v)
		}
		return base64.StdEncoding.AppendEncode(b, v)
	case time.Time:
		return appendTimeValue(b, v, k)
	case duckdb.Interval:
		return appendInterval(b, v)
	default:
		return appendJSONValue(b, v, t)
	}
}

func appendCSVFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return appendFloat(b, f, bits)
}

// appendCSVField appends s, quoted when it is empty or holds a separator,
// quote, line break or leading space.
func appendCSVField(b []byte, s []byte) []byte {
	quote := len(s) == 0 || s[0] == ' ' || s[0] == '\t'
	if !quote {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
				quote = true
				break
			}
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"', '"')
			continue
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
