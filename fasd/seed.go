package fasd

import "math/rand/v2"

// Purpose separates the random streams derived from one run seed, so that
// sampling root r's subgraph and debiasing it never share a stream.
type Purpose uint64

// The purposes used by the pipeline. The numeric values are part of the
// seed derivation: changing them changes every sample.
const (
	PurposeSample Purpose = 1 // subgraph sampling (§2)
	PurposeDebias Purpose = 2 // reverse-diffusion noise (§8)
)

// Mix64 is the splitmix64 finaliser: it adds the golden-ratio increment
// 0x9E3779B97F4A7C15 to x and scrambles the sum with two xor-shift-multiply
// rounds (constants 0xBF58476D1CE4E5B9 and 0x94D049BB133111EB, shifts 30,
// 27, 31). It is a bijection on uint64.
func Mix64(x uint64) uint64 {
	z := x + 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// DeriveSeed folds parts into seed: h = Mix64(seed), then h = Mix64(h ^ p)
// for each part p in order. It is the one way this project derives seeds of
// sub-streams (per root, per purpose, per content version).
func DeriveSeed(seed uint64, parts ...uint64) uint64 {
	h := Mix64(seed)
	for _, p := range parts {
		h = Mix64(h ^ p)
	}
	return h
}

// RootSeed returns the seed of root's stream for the given purpose:
// DeriveSeed(runSeed, uint64(purpose), uint64(root)). A root's sample then
// depends only on (runSeed, root) and the adjacency lists it read, never on
// the order in which roots are processed.
func RootSeed(runSeed uint64, purpose Purpose, root uint32) uint64 {
	return DeriveSeed(runSeed, uint64(purpose), uint64(root))
}

// NewRand returns the generator every consumer of a derived seed must use:
// rand.New(rand.NewPCG(seed, Mix64(seed))). Two components that build their
// generator this way from the same seed draw the same numbers.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(NewPCG(seed))
}

// NewPCG returns NewRand's source, for a loop that draws from it directly
// (package pcg): rand.NewPCG(seed, Mix64(seed)).
func NewPCG(seed uint64) *rand.PCG {
	return rand.NewPCG(seed, Mix64(seed))
}
