package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// Ensure that every enumerated key is a settable string key with values,
// that each value passes validation on that key and an unknown one fails
// with an error naming the key and listing the values.
func TestEnums(t *testing.T) {
	keys := map[string]bool{}
	for _, k := range Keys() {
		keys[k] = true
	}
	for _, e := range enums {
		if !keys[e.key] || len(Choices(e.key)) == 0 {
			t.Errorf("%s: not a key, or no values", e.key)
			continue
		}
		for _, v := range Choices(e.key) {
			c, _ := Preset(DefaultPreset)
			if err := c.Set(e.key, v); err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil && strings.Contains(err.Error(), e.key+": \"") {
				t.Errorf("%s=%s: %v", e.key, v, err)
			}
		}
		c, _ := Preset(DefaultPreset)
		if err := c.Set(e.key, "bogus"); err != nil {
			t.Fatal(err)
		}
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), e.key) || !strings.Contains(err.Error(), strings.Join(Choices(e.key), ", ")) {
			t.Errorf("%s=bogus: %v", e.key, err)
		}
	}
	if Choices("score.lr") != nil {
		t.Error("score.lr has choices")
	}
}

// Ensure that every debias enum value maps to the sampler options.
func TestDebiasOptions_Enums(t *testing.T) {
	for _, key := range []string{"debias.schedule", "debias.order", "debias.init", "debias.reverse", "debias.post"} {
		for _, v := range Choices(key) {
			c, _ := Preset(DefaultPreset)
			if err := c.Set(key, v); err != nil {
				t.Fatal(err)
			}
			c.Debias.TStart = 0.5
			o, post, err := debiasOptions(&c)
			if err != nil {
				t.Fatalf("%s=%s: %v", key, v, err)
			}
			got := map[string]string{"debias.schedule": o.Schedule.String(), "debias.order": o.Order.String(),
				"debias.init": o.Init.String(), "debias.reverse": o.Reverse.String()}[key]
			if key == "debias.post" {
				got = string(PostContinuous)
				if post.Clip01 {
					got = string(PostClip01)
				} else if post.Binarize {
					got = string(PostBinarize)
				}
			}
			if got != v {
				t.Errorf("%s=%s maps to %s", key, v, got)
			}
		}
	}
}
