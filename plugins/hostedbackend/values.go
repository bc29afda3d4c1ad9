package hostedbackend

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// This file parses the text forms PostgreSQL's JSON encoding (row_to_json,
// json_agg: what PostgREST sends) uses for non-JSON-native types. All parsers
// are exact and allocation-free on the common path.

const (
	microsPerSecond = int64(1_000_000)
	microsPerDay    = 86_400 * microsPerSecond
)

// daysFromCivil returns the number of days since 1970-01-01 of a proleptic
// Gregorian date (astronomical year numbering: 1 BC is year 0).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := int64((153*mp+2)/5 + d - 1)
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// atoiN parses exactly the ASCII digits s[i:j].
func atoiN(s string, i, j int) (int, bool) {
	if i >= j || j > len(s) {
		return 0, false
	}
	n := 0
	for k := i; k < j; k++ {
		c := s[k]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// parseDate parses "YYYY-MM-DD" (year may have more than 4 digits), with an
// optional " BC" suffix, and returns the day number since 1970-01-01.
// PostgreSQL's infinite dates map to ±math.MaxInt32, DuckDB's encoding.
func parseDate(s string) (int32, error) {
	switch s {
	case "infinity":
		return math.MaxInt32, nil
	case "-infinity":
		return -math.MaxInt32, nil
	}
	days, rest, err := parseDatePart(s)
	if err != nil {
		return 0, err
	}
	if rest != "" {
		return 0, fmt.Errorf("invalid date %q", clone(s))
	}
	if days > math.MaxInt32 || days < math.MinInt32 {
		return 0, fmt.Errorf("date %q out of range", clone(s))
	}
	return int32(days), nil
}

// parseDatePart parses the leading date of s and handles a trailing " BC"
// anywhere after it; it returns the days and what follows the date
// (without the BC suffix).
func parseDatePart(s string) (int64, string, error) {
	bc := false
	if strings.HasSuffix(s, " BC") {
		bc = true
		s = s[:len(s)-3]
	}
	i := strings.IndexByte(s, '-')
	if i < 4 || len(s) < i+6 || s[i+3] != '-' {
		return 0, "", fmt.Errorf("invalid date %q", clone(s))
	}
	y, ok1 := atoiN(s, 0, i)
	m, ok2 := atoiN(s, i+1, i+3)
	d, ok3 := atoiN(s, i+4, i+6)
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, "", fmt.Errorf("invalid date %q", clone(s))
	}
	year := int64(y)
	if bc {
		year = 1 - year
	}
	return daysFromCivil(year, m, d), s[i+6:], nil
}

// parseClock parses "HH:MM:SS[.ffffff]" at the start of s and returns the
// microseconds since midnight and the rest of s.
func parseClock(s string) (int64, string, error) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, "", fmt.Errorf("invalid time %q", clone(s))
	}
	h, ok1 := atoiN(s, 0, 2)
	mi, ok2 := atoiN(s, 3, 5)
	sec, ok3 := atoiN(s, 6, 8)
	if !ok1 || !ok2 || !ok3 || h > 24 || mi > 59 || sec > 60 {
		return 0, "", fmt.Errorf("invalid time %q", clone(s))
	}
	us := (int64(h)*3600 + int64(mi)*60 + int64(sec)) * microsPerSecond
	rest := s[8:]
	if len(rest) > 0 && rest[0] == '.' {
		j := 1
		frac := int64(0)
		digits := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			if digits < 6 {
				frac = frac*10 + int64(rest[j]-'0')
				digits++
			}
			j++
		}
		if j == 1 {
			return 0, "", fmt.Errorf("invalid time %q", clone(s))
		}
		for ; digits < 6; digits++ {
			frac *= 10
		}
		us += frac
		rest = rest[j:]
	}
	return us, rest, nil
}

// parseTime parses a time of day into microseconds since midnight.
func parseTime(s string) (int64, error) {
	us, rest, err := parseClock(s)
	if err != nil {
		return 0, err
	}
	if rest != "" {
		return 0, fmt.Errorf("invalid time %q", clone(s))
	}
	return us, nil
}

// parseOffset parses a UTC offset "+HH", "+HH:MM" or "+HH:MM:SS" (PostgreSQL
// prints seconds for historic local mean time offsets) into seconds.
func parseOffset(s string) (int64, error) {
	if (len(s) != 3 && len(s) != 6 && len(s) != 9) || (s[0] != '+' && s[0] != '-') {
		return 0, fmt.Errorf("invalid UTC offset %q", clone(s))
	}
	total := int64(0)
	for i, mult := 1, int64(3600); i < len(s); i, mult = i+3, mult/60 {
		if i > 1 && s[i-1] != ':' {
			return 0, fmt.Errorf("invalid UTC offset %q", clone(s))
		}
		n, ok := atoiN(s, i, i+2)
		if !ok {
			return 0, fmt.Errorf("invalid UTC offset %q", clone(s))
		}
		total += int64(n) * mult
	}
	if s[0] == '-' {
		total = -total
	}
	return total, nil
}

// clone copies a string put into an error, so that the parsers' arguments
// do not escape and converting a []byte to call them does not allocate.
func clone(s string) string { return strings.Clone(s) }

// parseTimestamp parses PostgreSQL's JSON timestamp text
// ("2024-05-01T12:30:00.5", with "+02:00" for timestamptz, " BC" for BC) into
// microseconds since the Unix epoch in UTC. ±infinity map to ±MaxInt64,
// DuckDB's encoding of infinite timestamps.
func parseTimestamp(s string, withTZ bool) (int64, error) {
	switch s {
	case "infinity":
		return math.MaxInt64, nil
	case "-infinity":
		return -math.MaxInt64, nil
	}
	days, rest, err := parseDatePart(s)
	if err != nil {
		return 0, fmt.Errorf("invalid timestamp %q", clone(s))
	}
	if len(rest) < 1 || (rest[0] != 'T' && rest[0] != ' ') {
		return 0, fmt.Errorf("invalid timestamp %q", clone(s))
	}
	clock, rest, err := parseClock(rest[1:])
	if err != nil {
		return 0, fmt.Errorf("invalid timestamp %q", clone(s))
	}
	var off int64
	switch {
	case rest == "" && !withTZ:
	case rest == "Z" && withTZ:
	case withTZ:
		off, err = parseOffset(rest)
		if err != nil {
			return 0, fmt.Errorf("invalid timestamp %q", clone(s))
		}
	default:
		return 0, fmt.Errorf("invalid timestamp %q", clone(s))
	}
	// days*microsPerDay stays far from overflow for PostgreSQL's range
	// except its last ~30 years (after 294246 AD), which are rejected.
	if days > 106_751_991 || days < -106_751_991 {
		return 0, fmt.Errorf("timestamp %q out of range", clone(s))
	}
	return days*microsPerDay + clock - off*microsPerSecond, nil
}

// parseInterval parses PostgreSQL's default ("postgres" IntervalStyle)
// interval output, e.g. "1 year 2 mons -3 days +04:05:06.789".
func parseInterval(s string) (arrow.MonthDayNanoInterval, error) {
	var iv arrow.MonthDayNanoInterval
	fields := strings.Fields(s)
	var months, days int64
	var micros int64
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			sign := int64(1)
			switch f[0] {
			case '-':
				sign = -1
				f = f[1:]
			case '+':
				f = f[1:]
			}
			// Hours may exceed two digits ("100:00:00").
			colon := strings.IndexByte(f, ':')
			h, ok := atoiN(f, 0, colon)
			if !ok {
				return iv, fmt.Errorf("invalid interval %q", clone(s))
			}
			rest := f[colon+1:]
			if len(rest) == 2 { // "HH:MM"
				rest += ":00"
			}
			us, tail, err := parseClock("00:" + rest)
			if err != nil || tail != "" {
				return iv, fmt.Errorf("invalid interval %q (set IntervalStyle to postgres)", clone(s))
			}
			micros += sign * (int64(h)*3600*microsPerSecond + us)
			continue
		}
		if i+1 >= len(fields) {
			return iv, fmt.Errorf("invalid interval %q (set IntervalStyle to postgres)", clone(s))
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return iv, fmt.Errorf("invalid interval %q (set IntervalStyle to postgres)", clone(s))
		}
		unit := fields[i+1]
		i++
		switch strings.TrimSuffix(unit, "s") {
		case "year":
			months += n * 12
		case "mon":
			months += n
		case "day":
			days += n
		default:
			return iv, fmt.Errorf("invalid interval %q (set IntervalStyle to postgres)", clone(s))
		}
	}
	if months > math.MaxInt32 || months < math.MinInt32 || days > math.MaxInt32 || days < math.MinInt32 {
		return iv, fmt.Errorf("interval %q out of range", clone(s))
	}
	iv.Months = int32(months)
	iv.Days = int32(days)
	iv.Nanoseconds = micros * 1000
	return iv, nil
}

// parseBytea decodes PostgreSQL's bytea text: "\x0102…" (hex, the default
// bytea_output) or the legacy escape format.
func parseBytea(s string, dst []byte) ([]byte, error) {
	if strings.HasPrefix(s, `\x`) {
		n := len(s) - 2
		if n%2 != 0 {
			return nil, errors.New("invalid bytea hex text: odd length")
		}
		need := n / 2
		if cap(dst) < need {
			dst = make([]byte, need)
		}
		dst = dst[:need]
		if _, err := hex.Decode(dst, []byte(s[2:])); err != nil {
			return nil, errors.New("invalid bytea hex text")
		}
		return dst, nil
	}
	dst = dst[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			dst = append(dst, '\\')
			i++
			continue
		}
		if i+3 < len(s) {
			v, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
			if err == nil {
				dst = append(dst, byte(v))
				i += 3
				continue
			}
		}
		return nil, errors.New("invalid bytea escape text")
	}
	return dst, nil
}

// parseUUID parses the canonical 8-4-4-4-12 form (any case, also without
// dashes or in braces as PostgreSQL accepts them).
func parseUUID(s string) ([16]byte, error) {
	var u [16]byte
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	j := 0
	for i := 0; i < len(s); {
		if s[i] == '-' {
			i++
			continue
		}
		if j == 16 || i+1 >= len(s) {
			return u, fmt.Errorf("invalid uuid %q", clone(s))
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return u, fmt.Errorf("invalid uuid %q", clone(s))
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	if j != 16 {
		return u, fmt.Errorf("invalid uuid %q", clone(s))
	}
	return u, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseDecimal parses a JSON number text exactly (never through float64)
// into a decimal128 with the given precision and scale. More fractional
// digits than the scale, or more digits than the precision, are errors: the
// server already rounded to the column's type, so they mean a mapping bug.
func parseDecimal(s string, precision, scale int32) (decimal128.Num, error) {
	orig := s
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return decimal128.Num{}, fmt.Errorf("invalid number %q", clone(orig))
		}
		exp = e
		s = s[:i]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i+1:]
	}
	digits := intPart + frac
	if digits == "" {
		return decimal128.Num{}, fmt.Errorf("invalid number %q", clone(orig))
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return decimal128.Num{}, fmt.Errorf("invalid number %q", clone(orig))
		}
	}
	// value = digits × 10^(exp - len(frac)); we need value × 10^scale.
	shift := int(scale) + exp - len(frac)
	if shift < 0 {
		// Only trailing zeros may be dropped.
		cut := len(digits) + shift
		if cut < 0 {
			cut = 0
		}
		if strings.Trim(digits[cut:], "0") != "" {
			return decimal128.Num{}, fmt.Errorf("number %s has more than %d fractional digits", clone(orig), scale)
		}
		digits = digits[:cut]
	} else {
		digits += strings.Repeat("0", shift)
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > int(precision) {
		return decimal128.Num{}, fmt.Errorf("number %s does not fit numeric(%d,%d)", clone(orig), precision, scale)
	}
	var n decimal128.Num
	if len(digits) <= 18 {
		v, _ := strconv.ParseInt("0"+digits, 10, 64)
		n = decimal128.FromI64(v)
	} else {
		b, ok := new(big.Int).SetString(digits, 10)
		if !ok {
			return decimal128.Num{}, fmt.Errorf("invalid number %q", clone(orig))
		}
		n = decimal128.FromBigInt(b)
	}
	if neg {
		n = n.Negate()
	}
	return n, nil
}
