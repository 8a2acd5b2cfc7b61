package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/nn"
)

// emitFairProbs runs f (m.F) on every subgraph of the debiased view deb
// in padded batches (classProbsOn) and hands each subgraph's
// probabilities to put, in order, with its clean features from orig
// (Options.FairProbs), reporting progress to rep. At most
// evalChunk·workers probability vectors are held at a time.
func emitFairProbs(ctx context.Context, m *Models, orig, deb *view, workers int,
	put func(ctx context.Context, m *Models, sg *fasd.Subgraph, x, probs []float32) error, rep *reporter) error {
	n := len(deb.sgs)
	dst := make([][]float32, n)
	step := evalChunk * workers
	idx := make([]int, 0, step)
	var xb []float32
	for lo := 0; lo < n; lo += step {
		hi := min(n, lo+step)
		idx = idx[:0]
		for i := lo; i < hi; i++ {
			idx = append(idx, i)
		}
		if err := classProbsOn(ctx, m.F, deb, idx, m.D, workers, dst); err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			x, err := orig.x(i, xb)
			if err != nil {
				return err
			}
			if !orig.holds(i) {
				xb = x
			}
			if err := put(ctx, m, orig.sgs[i], x, dst[i]); err != nil {
				return err
			}
			dst[i] = nil
		}
		rep.progress(hi)
	}
	return nil
}

// FairFingerprint identifies everything f's probabilities on a debiased
// subgraph depend on besides the subgraph and its root: the config (the
// seed, the diffusion and debiasing settings, the architectures), the
// feature schema and the parameters of g_sen, the score networks, f and
// the guides. It leaves out FBase, Threshold and FellBack, which are set
// after f (Options.FairProbs sees the models without them), so the
// fingerprint of the models a run hands to FairProbs equals that of the
// bundle it saves, once loaded. It is the hex SHA-256 of those parts.
func (m *Models) FairFingerprint() (string, error) {
	if m.F == nil {
		return "", fmt.Errorf("%w: no classifier f", ErrModels)
	}
	h := sha256.New()
	h.Write([]byte("fasd fair fingerprint 1\x00"))
	h.Write([]byte(m.Config.TOML()))
	h.Write([]byte{0})
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(m.D)))
	h.Write([]byte(m.FeatureHash))
	h.Write([]byte{0})
	for _, p := range m.parts() {
		if p.name == "f_base" {
			continue
		}
		h.Write([]byte(p.name))
		h.Write([]byte{0})
		if err := nn.SaveParams(h, p.params); err != nil {
			return "", fmt.Errorf("pipeline: fingerprint %s: %w", p.name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
