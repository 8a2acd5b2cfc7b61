package query

import (
	"fmt"

	"github.com/fasd-db/fasd/index"
	"github.com/fasd-db/fasd/query/model"
)

// models are the trained models an engine serves and what it derives
// from them. A writer serves the models Open loaded (Engine.base) until it
// closes; a replica switches to newer ones when the writer's views move to
// them (see doc.go, "Replicas"). A read takes one *models and uses only
// it, so its answer never mixes two models.
type models struct {
	model    model.Model
	info     model.Info
	variants []string // info.VariantNames()
	tag      uint64   // modelTag(info.Version)
	scorers  chan model.Scorer
}

// newModels checks m against the graph g (sampler options, variants, the
// feature schema: ErrSchema) and returns it with the scorer pool pool.
func newModels(g *index.Graph, m model.Model, pool chan model.Scorer) (*models, error) {
	info := m.Info()
	if err := info.Sample.Validate(); err != nil {
		return nil, fmt.Errorf("query: model sampler options: %w", err)
	}
	if err := info.ValidateVariants(); err != nil {
		return nil, fmt.Errorf("%w: model variants: %w", ErrInvalid, err)
	}
	if schema := g.Schema(); info.FeatureHash != schema.FeatureHash() {
		want := schema.FeatureHash()
		return nil, fmt.Errorf("%w: models trained on features %.12s…, graph has %.12s…; retrain with fasd train",
			ErrSchema, info.FeatureHash, want)
	}
	return &models{model: m, info: info, variants: info.VariantNames(), tag: modelTag(info.Version),
		scorers: pool}, nil
}

// models returns the models the engine serves now: a replica's current
// ones, a writer's own.
func (e *Engine) models() *models {
	if e.rep != nil {
		if s := e.rep.cur.Load(); s != nil {
			return s.m
		}
	}
	return e.base
}

// scorer takes a scorer from the pool or makes one.
func (m *models) scorer() (model.Scorer, error) {
	select {
	case s := <-m.scorers:
		return s, nil
	default:
		return m.model.NewScorer()
	}
}

func (m *models) putScorer(s model.Scorer) {
	select {
	case m.scorers <- s:
	default:
	}
}

// wantMeta is the meta record of views built with m.
func (m *models) wantMeta() meta {
	s := m.info.Sample
	return meta{
		Format: viewsFormat, Model: m.info.Version, Seed: m.info.Seed,
		Mode: s.Mode.String(), Depth: s.Depth, Fanout: s.Fanout, Edges: s.Edges.String(), MaxNodes: s.MaxNodes,
		FeatureHash: m.info.FeatureHash, Variants: m.info.VariantNames(),
	}
}

// otherVariants maps the names of the variants after the served one to
// their probabilities (nil when there are none).
func (m *models) otherVariants(probs [][2]float64) map[string][2]float64 {
	if len(probs) < 2 {
		return nil
	}
	out := make(map[string][2]float64, len(probs)-1)
	for k := 1; k < len(probs) && k < len(m.variants); k++ {
		out[m.variants[k]] = probs[k]
	}
	return out
}
