package model

import (
	"strings"
	"testing"
)

// Ensure that variant names are checked: count, duplicates, spelling.
func TestValidateVariants(t *testing.T) {
	many := make([]string, MaxVariants+1)
	for i := range many {
		many[i] = "v" + strings.Repeat("x", i)
	}
	for _, c := range []struct {
		names []string
		want  string // "" = valid
	}{
		{nil, ""},
		{[]string{FairVariant, NoDiffusionVariant, "dt_rev_005"}, ""},
		{[]string{"fasd", "fasd"}, "named twice"},
		{[]string{"fasd", ""}, "variants[1]"},
		{[]string{"Fasd"}, "lower-case"},
		{[]string{"9lives"}, "lower-case"},
		{[]string{"a-b"}, "lower-case"},
		{[]string{strings.Repeat("a", 33)}, "32 characters"},
		{many, "at most"},
	} {
		info := Info{Variants: c.names}
		err := info.ValidateVariants()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.names, err, c.want)
		}
	}
	if got := (&Info{}).VariantNames(); len(got) != 1 || got[0] != FairVariant {
		t.Errorf("default variants %v", got)
	}
}
