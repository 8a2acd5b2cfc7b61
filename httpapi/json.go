package httpapi

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/fasd-db/fasd/query"
)

// appendPrediction appends the JSON encoding of p to dst, byte for byte
// what encoding/json.Marshal produces for it, without reflection or
// allocation: it is the body of the hottest answer of the API. ok is false
// (and dst unchanged) when p holds a value Marshal rejects (a NaN or an
// infinite probability); the caller then takes the generic path, which
// reports the error.
func appendPrediction(dst []byte, p *query.Prediction) (_ []byte, ok bool) {
	if !finite(p.Probs[0]) || !finite(p.Probs[1]) {
		return dst, false
	}
	for _, v := range p.Variants {
		if !finite(v[0]) || !finite(v[1]) {
			return dst, false
		}
	}
	b := append(dst, `{"node":`...)
	b = strconv.AppendUint(b, uint64(p.Node), 10)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, p.ID, 10)
	b = append(b, `,"class":`...)
	b = strconv.AppendInt(b, int64(p.Class), 10)
	b = append(b, `,"probs":[`...)
	b = appendJSONFloat(b, p.Probs[0])
	b = append(b, ',')
	b = appendJSONFloat(b, p.Probs[1])
	b = append(b, `],"subgraphs":`...)
	b = strconv.AppendInt(b, int64(p.Subgraphs), 10)
	if len(p.Variants) > 0 {
		// encoding/json writes map keys sorted.
		var buf [4]string
		names := buf[:0]
		for name := range p.Variants {
			names = append(names, name)
		}
		slices.Sort(names)
		b = append(b, `,"variants":{`...)
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			v := p.Variants[name]
			b = appendJSONString(b, name)
			b = append(b, `:[`...)
			b = appendJSONFloat(b, v[0])
			b = append(b, ',')
			b = appendJSONFloat(b, v[1])
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `,"model":`...)
	b = appendJSONString(b, p.Model)
	b = append(b, `,"view_version":`...)
	b = strconv.AppendUint(b, p.ViewVersion, 10)
	b = append(b, `,"graph_version":`...)
	b = strconv.AppendUint(b, p.GraphVersion, 10)
	b = append(b, `,"stale":`...)
	b = strconv.AppendBool(b, p.Stale)
	b = append(b, `,"source":`...)
	b = appendJSONString(b, string(p.Source))
	return append(b, '}'), true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// appendJSONFloat formats a finite float64 as encoding/json does: the
// shortest representation, in exponent form only below 1e-6 or from 1e21
// on, with a one-digit negative exponent unpadded.
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONString quotes s. Plain printable ASCII without the characters
// encoding/json escapes (", \, <, >, &) is copied; anything else goes
// through encoding/json, which is rare here (model versions and sources
// are plain ASCII).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
