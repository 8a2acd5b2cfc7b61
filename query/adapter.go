package query

import (
	"github.com/fasd-db/fasd/fasd/pipeline"
	"github.com/fasd-db/fasd/storage"
)

// featureHash identifies an ordered list of feature names exactly as the
// pipeline records it with trained models.
func featureHash(names []string) string { return pipeline.FeatureHash(names) }

// LoadStoredModel loads the latest trained models persisted in the store by
// fasd train (LoadLatestModel), or fails with ErrNoModel.
func LoadStoredModel(s storage.Reader) (Model, error) {
	m, err := LoadLatestModel(s)
	if err != nil {
		return nil, err
	}
	return m, nil
}
