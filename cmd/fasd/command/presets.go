package command

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fasd-db/fasd/index/dump"
)

// printPresets writes every dataset preset with its conventions, as the
// registry (dump.Presets) records them.
func printPresets(w io.Writer) error {
	var errs []error
	pr := func(format string, args ...any) {
		_, err := fmt.Fprintf(w, format, args...)
		errs = append(errs, err)
	}
	for i, p := range dump.Presets() {
		if i > 0 {
			pr("\n")
		}
		for j, line := range describePreset(p) {
			name := ""
			if j == 0 {
				name = p.Name
			}
			pr("%-9s %s\n", name, line)
		}
	}
	return errors.Join(errs...)
}

// describePreset renders a preset's conventions, one aspect per line.
func describePreset(p dump.Preset) []string {
	s := p.Spec
	ends := "endpoints are row indices"
	if s.IDColumn != "" {
		ends = fmt.Sprintf("ids in column %s", s.IDColumn)
	}
	sens := fmt.Sprintf("sensitive %s: ", s.Sensitive.Column)
	if s.Sensitive.Named != nil {
		sens += valueMap(s.Sensitive.Named)
	} else {
		sens += fmt.Sprintf("> %g → 1, < 0 unknown", s.Sensitive.Threshold)
	}
	if s.SensitiveFeature {
		sens += "; kept as a feature"
	}
	label := fmt.Sprintf("label %s: ", s.Label.Column)
	switch {
	case s.Label.Named != nil:
		label += valueMap(s.Label.Named)
	case s.Label.AllLabelled:
		label += "0, ≥ 1 → 1, every node labelled"
	default:
		u := s.Label.Unlabelled
		if u == "" {
			u = "-1"
		}
		label += fmt.Sprintf("0, ≥ 1 → 1, %s unlabelled", u)
	}
	feats := "features: every other column"
	if len(s.Features) > 0 {
		feats = "features: " + strings.Join(s.Features, ", ")
	} else if len(s.Exclude) > 0 {
		feats += ", without " + strings.Join(s.Exclude, ", ")
	}
	if s.Scale {
		feats += "; scaled to [-1, 1]"
	}
	sp := fmt.Sprintf("split dig: a %g, b %g, cap %d", p.DIG.A, p.DIG.B, p.DIG.Cap)
	if p.Split == dump.SplitNIFTY {
		sp = fmt.Sprintf("split nifty: label number %d", p.LabelNumber)
	}
	return []string{
		fmt.Sprintf("files %s, %s (plain or .gz); %s", p.NodeFile, p.EdgeFile, ends),
		sens, label, feats, sp + " (seed 20)",
		"as in " + p.Origin,
	}
}

// valueMap renders a value map sorted by key.
func valueMap(m map[string]int8) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
