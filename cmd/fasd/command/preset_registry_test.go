package command

import (
	"testing"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/index/dump"
)

// ensure that every loading preset has a training configuration, so that
// `fasd load --preset X` followed by `fasd train --preset X` always works.
func TestPresetRegistries(t *testing.T) {
	for _, name := range dump.PresetNames() {
		cfg, err := pipeline.Preset(name)
		if err != nil {
			t.Errorf("loading preset %q has no training preset: %v", name, err)
			continue
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("training preset %q: %v", name, err)
		}
	}
}
