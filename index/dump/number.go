package dump

import (
	"errors"
	"math"
	"strconv"
)

// maxExactFloat is 2^53: above it, not every integer has a float64 spelling,
// so an id written in float notation could silently name another node.
const maxExactFloat = 1 << 53

// trimSpace removes ASCII spaces and tabs (and a trailing CR) around s.
func trimSpace[T ~string | ~[]byte](s T) T {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t' || s[j-1] == '\r') {
		j--
	}
	return s[i:j]
}

// parseNumber parses a finite float64. On failure it returns the error class
// (ErrNotNumber or ErrNonFinite). It does not allocate for a valid number.
func parseNumber[T ~string | ~[]byte](s T) (float64, error) {
	t := trimSpace(s)
	// Fast path: short integers (indicator columns, counts) are exact in
	// float64 up to 15 digits.
	if len(t) > 0 && len(t) <= 15 {
		if i, ok := parseDecimal(t); ok {
			if i == 0 && t[0] == '-' {
				return math.Copysign(0, -1), nil
			}
			return float64(i), nil
		}
	}
	if v, ok := parsePlainDecimal(t); ok {
		return v, nil
	}
	if goOnlySyntax(t) {
		return 0, ErrNotNumber
	}
	v, err := strconv.ParseFloat(string(t), 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0) {
			return 0, ErrNonFinite
		}
		// ParseFloat returns the nearest value for underflow with ErrRange;
		// a tiny number is still a number.
		if errors.Is(err, strconv.ErrRange) {
			return v, nil
		}
		return 0, ErrNotNumber
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, ErrNonFinite
	}
	return v, nil
}

// parseInteger parses an int64 written as a decimal integer or in float
// notation with an integral value (8.380e+02 → 838). Float notation is only
// accepted up to 2^53 in magnitude, where it is exact. detail explains a
// failure.
func parseInteger[T ~string | ~[]byte](b T) (v int64, detail string, ok bool) {
	if v, ok := parseDecimal(b); ok {
		return v, "", true
	}
	s := trimSpace(string(b))
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, "", true
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, "out of int64 range: " + echo(s), false
	}
	if goOnlySyntax(s) {
		return 0, "not an integer: " + echo(s), false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, "not an integer: " + echo(s), false
	}
	if f != math.Trunc(f) {
		return 0, "not integral: " + echo(s), false
	}
	if math.Abs(f) > maxExactFloat {
		return 0, "float notation beyond 2^53 is not exact: " + echo(s), false
	}
	return int64(f), "", true
}

// goOnlySyntax reports spellings strconv.ParseFloat takes from Go's
// literal syntax that are not numbers in a CSV file: digit separators
// (1_000) and hexadecimal mantissas and exponents (0x1p4).
func goOnlySyntax[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '_', 'x', 'X', 'p', 'P':
			return true
		}
	}
	return false
}

// parseDecimal is the allocation-free fast path of parseInteger: an optional
// sign followed by 1–18 ASCII digits (always within int64).
func parseDecimal[T ~string | ~[]byte](b T) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// exactPow10 holds the powers of ten that float64 represents exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parsePlainDecimal is the fast path of parseNumber for a plain decimal: an
// optional sign, digits, an optional point and digits (at least one digit
// in all, no exponent), with at most 15 digits. The digits form an integer
// m < 10^15 < 2^53 and the value is m / 10^k with k ≤ 15, both exact in
// float64, so the one division is correctly rounded: the result is the one
// strconv.ParseFloat gives (Clinger's fast path). Anything else reports
// false.
func parsePlainDecimal[T ~string | ~[]byte](b T) (float64, bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	var m uint64
	digits, frac := 0, -1
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
		case c == '.' && frac < 0:
			frac = digits
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	v := float64(m)
	if frac >= 0 {
		v /= exactPow10[digits-frac]
	}
	if neg {
		v = -v
	}
	return v, true
}
