package runs

import (
	"testing"

	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/query/model"
)

// Ensure that the seam's variant names (query/model cannot import the
// pipeline) are the pipeline's.
func TestVariantNamesAgree(t *testing.T) {
	if model.FairVariant != string(pipeline.VariantFASD) || model.NoDiffusionVariant != string(pipeline.VariantNoDiffusion) {
		t.Errorf("model %q/%q, pipeline %q/%q", model.FairVariant, model.NoDiffusionVariant, pipeline.VariantFASD, pipeline.VariantNoDiffusion)
	}
}
