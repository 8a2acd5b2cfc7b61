package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// Ensure that every preset validates and carries the paper's values.
func TestPreset_Values(t *testing.T) {
	tests := []struct {
		name   string
		depth  int
		lambda float64
		steps  int
	}{
		{"nba", 2, 0.1, 5}, {"pokec_z", 3, 10, 4}, {"pokec_n", 3, 10, 2}, {"synth", 2, 1, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Preset(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("preset does not validate: %v", err)
			}
			if c.Sample.Depth != tc.depth || c.Diffusion.LambdaX != tc.lambda || c.Debias.Steps != tc.steps {
				t.Errorf("got d=%d λ=%v N_steps=%d", c.Sample.Depth, c.Diffusion.LambdaX, c.Debias.Steps)
			}
		})
	}
	if _, err := Preset("cora"); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown preset: %v", err)
	}
}

// Ensure that Validate reports every problem, each by its key.
func TestConfig_ValidateAll(t *testing.T) {
	c, _ := Preset("nba")
	c.Score.Epochs = -1
	c.Diffusion.Gamma = "cubic"
	c.Debias.Tau = -1
	c.Sample.Fanout = 0
	err := c.Validate()
	for _, key := range []string{"score.epochs", "diffusion.gamma", "debias.tau", "sample.fanout"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("error does not name %s: %v", key, err)
		}
	}
}

// Ensure that TOML round-trips and that overrides by TOML and by key apply.
func TestConfig_TOMLAndSet(t *testing.T) {
	c, _ := Preset("nba")
	text := c.TOML()
	var back Config
	if err := back.LoadTOML("round-trip", strings.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	if back != c {
		t.Fatalf("round trip changed the config:\n%s", back.TOML())
	}
	if err := c.LoadTOML("over.toml", strings.NewReader("[score]\nepochs = 7\n[debias]\ndt_rev = 0.005\n")); err != nil {
		t.Fatal(err)
	}
	if c.Score.Epochs != 7 || c.Debias.DtRev != 0.005 || c.Score.LR != 1e-2 {
		t.Errorf("TOML override: epochs=%d dt=%v lr=%v", c.Score.Epochs, c.Debias.DtRev, c.Score.LR)
	}
	err := c.LoadTOML("bad.toml", strings.NewReader("[score]\nepoch = 7\n"))
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "score.epoch") || !strings.Contains(err.Error(), "bad.toml") {
		t.Errorf("unknown key: %v", err)
	}
	for _, tc := range []struct {
		key, val string
		ok       bool
	}{
		{"score.epochs", "12", true}, {"diffusion.gamma", "linear", true}, {"seed", "9", true},
		{"score.use_ema", "true", true}, {"score.epochs", "x", false}, {"score", "1", false}, {"nope.x", "1", false},
	} {
		err := c.Set(tc.key, tc.val)
		if (err == nil) != tc.ok {
			t.Errorf("Set(%s, %s) = %v, want ok=%v", tc.key, tc.val, err, tc.ok)
		}
	}
	if c.Score.Epochs != 12 || c.Diffusion.Gamma != "linear" || c.Seed != 9 || !c.Score.UseEMA {
		t.Errorf("Set did not apply: %+v", c)
	}
	if len(Keys()) < 40 {
		t.Errorf("Keys() = %d keys", len(Keys()))
	}
}
