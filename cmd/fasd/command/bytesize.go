package command

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ByteSize is a memory size in bytes, a flag value: a number with an
// optional unit, binary (KiB, MiB, GiB, TiB) or decimal (kB, MB, GB, TB; K,
// M, G and T alone are binary), e.g. 512MiB, 1.5GiB, 800MB; a plain number
// is bytes.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	scale  float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseByteSize parses a size such as "512MiB" (see ByteSize).
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	scale := 1.0
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, scale = strings.TrimSpace(rest), u.scale
			break
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x*scale > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a size (want e.g. 512MiB, 1.5GiB, 800MB)", s)
	}
	return ByteSize(math.Round(x * scale)), nil
}

// String prints the size with a binary unit, e.g. "1.5 GiB".
func (b ByteSize) String() string {
	x := float64(b)
	for _, u := range []struct {
		name  string
		scale float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if x >= u.scale {
			return strconv.FormatFloat(x/u.scale, 'f', 1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10) + " B"
}

// Set implements pflag.Value.
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Type implements pflag.Value.
func (b *ByteSize) Type() string { return "size" }
