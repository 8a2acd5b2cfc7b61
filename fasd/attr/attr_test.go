package attr

import "testing"

// Ensure that ParseSplit inverts String for every split, reads "" as
// SplitNone and rejects other names.
func TestParseSplit(t *testing.T) {
	for s := SplitNone; s <= SplitTest; s++ {
		if got, err := ParseSplit(s.String()); err != nil || got != s {
			t.Errorf("ParseSplit(%q) = %v, %v", s.String(), got, err)
		}
	}
	if got, err := ParseSplit(""); err != nil || got != SplitNone {
		t.Errorf(`ParseSplit("") = %v, %v`, got, err)
	}
	for _, bad := range []string{"holdout", "Train", " test", "Split(4)"} {
		if _, err := ParseSplit(bad); err == nil {
			t.Errorf("ParseSplit(%q) accepted", bad)
		}
	}
	if Split(4).Valid() || !SplitTest.Valid() {
		t.Error("Valid")
	}
}
