package query

import (
	"math"
	"math/big"
	"strconv"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// maxSafeInt is the largest integer a JSON number keeps exactly in
// JavaScript (2^53 - 1). Integers beyond it are sent as strings.
const maxSafeInt = 1<<53 - 1

// Text forms shared by the JSON and CSV encoders. Each appends to b.

// appendFloat formats like encoding/json: shortest representation that
// round-trips, exponent form outside [1e-6, 1e21).
func appendFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			fmt = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, fmt, -1, bits)
	if fmt == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendDecimal formats a DECIMAL with exactly its scale's fractional
// digits: DECIMAL(5,2) 1.5 is "1.50".
func appendDecimal(b []byte, d duckdb.Decimal) []byte {
	if d.Value == nil {
		return append(b, '0')
	}
	digits := d.Value.String()
	neg := false
	if digits[0] == '-' {
		neg = true
		digits = digits[1:]
	}
	scale := int(d.Scale)
	if neg {
		b = append(b, '-')
	}
	if scale == 0 {
		return append(b, digits...)
	}
	if len(digits) <= scale {
		b = append(b, '0', '.')
		for i := len(digits); i < scale; i++ {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	b = append(b, digits[:len(digits)-scale]...)
	b = append(b, '.')
	return append(b, digits[len(digits)-scale:]...)
}

// appendBigInt appends v's decimal digits.
func appendBigInt(b []byte, v *big.Int) []byte {
	return v.Append(b, 10)
}

const hexDigits = "0123456789abcdef"

// appendUUID formats 16 bytes (the driver's UUID scan) as canonical
// 8-4-4-4-12 lowercase text.
func appendUUID(b []byte, u []byte) []byte {
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return b
}

func appendPad(b []byte, v, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendYear writes an ISO 8601 year: four digits for 0000-9999, otherwise
// the expanded form with a sign (+10000, -0044). Years are astronomical
// (year 0 is 1 BC), as in DuckDB.
func appendYear(b []byte, y int) []byte {
	switch {
	case y < 0:
		b = append(b, '-')
		return appendPad(b, -y, 4)
	case y > 9999:
		b = append(b, '+')
		return strconv.AppendInt(b, int64(y), 10)
	default:
		return appendPad(b, y, 4)
	}
}

func appendDate(b []byte, t time.Time) []byte {
	// DuckDB's infinite dates are ±(2^31-1) days from the epoch.
	days := t.Unix() / 86400
	switch days {
	case math.MaxInt32:
		return append(b, "infinity"...)
	case -math.MaxInt32:
		return append(b, "-infinity"...)
	}
	y, m, d := t.Date()
	b = appendYear(b, y)
	b = append(b, '-')
	b = appendPad(b, int(m), 2)
	b = append(b, '-')
	return appendPad(b, d, 2)
}

// appendClock writes HH:MM:SS and, when not zero, the fraction with
// `digits` digits.
func appendClock(b []byte, t time.Time, digits int) []byte {
	h, mi, s := t.Clock()
	b = appendPad(b, h, 2)
	b = append(b, ':')
	b = appendPad(b, mi, 2)
	b = append(b, ':')
	b = appendPad(b, s, 2)
	ns := t.Nanosecond()
	if ns != 0 {
		b = append(b, '.')
		if digits == 9 {
			b = appendPad(b, ns, 9)
		} else {
			b = appendPad(b, ns/1000, 6)
		}
	}
	return b
}

// appendOffset writes +HH:MM (or +HH:MM:SS) of a TIMETZ.
func appendOffset(b []byte, t time.Time) []byte {
	_, off := t.Zone()
	if off < 0 {
		b = append(b, '-')
		off = -off
	} else {
		b = append(b, '+')
	}
	b = appendPad(b, off/3600, 2)
	b = append(b, ':')
	b = appendPad(b, off/60%60, 2)
	if off%60 != 0 {
		b = append(b, ':')
		b = appendPad(b, off%60, 2)
	}
	return b
}

// isInfinite reports DuckDB's ±infinity timestamps (the extreme int64 of
// the type's unit).
func isInfinite(t time.Time, k kind) (bool, bool) {
	var v int64
	switch k {
	case kindTimestampS:
		v = t.Unix()
	case kindTimestampMS:
		v = t.UnixMilli()
	case kindTimestampNS:
		v = t.UnixNano()
	default:
		v = t.UnixMicro()
	}
	return v == math.MaxInt64, v == -math.MaxInt64
}

// appendTimestamp writes ISO 8601 in UTC with a Z: 2024-05-01T12:30:00Z,
// 2024-05-01T12:30:00.123456Z. TIMESTAMP without time zone is taken as UTC.
func appendTimestamp(b []byte, t time.Time, k kind) []byte {
	if pos, neg := isInfinite(t, k); pos || neg {
		if neg {
			return append(b, "-infinity"...)
		}
		return append(b, "infinity"...)
	}
	t = t.UTC()
	y, m, d := t.Date()
	b = appendYear(b, y)
	b = append(b, '-')
	b = appendPad(b, int(m), 2)
	b = append(b, '-')
	b = appendPad(b, d, 2)
	b = append(b, 'T')
	digits := 6
	if k == kindTimestampNS {
		digits = 9
	}
	b = appendClock(b, t, digits)
	return append(b, 'Z')
}

// appendInterval writes an ISO 8601 duration the way PostgreSQL's
// intervalstyle iso_8601 does: P1Y2M3DT4H5M6.5S, each part with its own
// sign when DuckDB's months, days and microseconds differ in sign
// (P-1M2D), PT0S for zero.
func appendInterval(b []byte, iv duckdb.Interval) []byte {
	b = append(b, 'P')
	if iv.Months == 0 && iv.Days == 0 && iv.Micros == 0 {
		return append(b, "T0S"...)
	}
	years, months := iv.Months/12, iv.Months%12
	if years != 0 {
		b = strconv.AppendInt(b, int64(years), 10)
		b = append(b, 'Y')
	}
	if months != 0 {
		b = strconv.AppendInt(b, int64(months), 10)
		b = append(b, 'M')
	}
	if iv.Days != 0 {
		b = strconv.AppendInt(b, int64(iv.Days), 10)
		b = append(b, 'D')
	}
	if iv.Micros == 0 {
		return b
	}
	b = append(b, 'T')
	us := iv.Micros
	neg := us < 0
	if neg {
		us = -us
	}
	h, rest := us/3_600_000_000, us%3_600_000_000
	mi, rest := rest/60_000_000, rest%60_000_000
	s, frac := rest/1_000_000, rest%1_000_000
	sign := func() {
		if neg {
			b = append(b, '-')
		}
	}
	if h != 0 {
		sign()
		b = strconv.AppendInt(b, h, 10)
		b = append(b, 'H')
	}
	if mi != 0 {
		sign()
		b = strconv.AppendInt(b, mi, 10)
		b = append(b, 'M')
	}
	if s != 0 || frac != 0 {
		sign()
		b = strconv.AppendInt(b, s, 10)
		if frac != 0 {
			b = append(b, '.')
			f := appendPad(nil, int(frac), 6)
			for len(f) > 0 && f[len(f)-1] == '0' {
				f = f[:len(f)-1]
			}
			b = append(b, f...)
		}
		b = append(b, 'S')
	}
	return b
}

// appendTimeValue writes a time.Time by the column's kind.
func appendTimeValue(b []byte, t time.Time, k kind) []byte {
	switch k {
	case kindDate:
		return appendDate(b, t)
	case kindTime:
		return appendClock(b, t, 6)
	case kindTimeTZ:
		b = appendClock(b, t, 6)
		return appendOffset(b, t)
	default:
		return appendTimestamp(b, t, k)
	}
}
