package fasd

import (
	"fmt"
	"math"
)

// SparseAdj is an N×N matrix kept as its non-zero entries, for holding
// many subgraph adjacencies at once: a subgraph of 20 nodes and 19 edges
// takes 1,600 bytes dense and 152 here (unit weights) or 304 (weighted).
//
// Idx lists the row-major positions i·N+j of the entries whose bits are
// not zero, ascending; W their values, or nil when every one is 1. Dense
// gives back the matrix it was made from bit for bit (a −0 entry is kept;
// every absent entry is +0), so code that reads the dense form computes
// the same bits from either.
type SparseAdj struct {
	N   int
	Idx []uint32
	W   []float32
}

// CompactAdj returns the sparse form of the n×n matrix a. It panics if
// len(a) ≠ n·n or n·n does not fit a uint32 position.
func CompactAdj(a []float32, n int) SparseAdj {
	if len(a) != n*n || uint64(n)*uint64(n) > math.MaxUint32+1 {
		panic(fmt.Sprintf("fasd: CompactAdj of %d values as %d×%d", len(a), n, n))
	}
	k, ones := 0, true
	for _, v := range a {
		if b := math.Float32bits(v); b != 0 {
			k++
			ones = ones && b == math.Float32bits(1)
		}
	}
	s := SparseAdj{N: n, Idx: make([]uint32, 0, k)}
	if !ones {
		s.W = make([]float32, 0, k)
	}
	for p, v := range a {
		if math.Float32bits(v) != 0 {
			s.Idx = append(s.Idx, uint32(p))
			if !ones {
				s.W = append(s.W, v)
			}
		}
	}
	return s
}

// Dense writes the matrix into dst (len N·N), every entry overwritten.
func (s *SparseAdj) Dense(dst []float32) error {
	if len(dst) != s.N*s.N {
		return fmt.Errorf("%w: dense adjacency of %d values for %d×%d", ErrShape, len(dst), s.N, s.N)
	}
	clear(dst)
	return s.scatter(dst, s.N)
}

// Scatter writes the entries into the top-left N×N block of dst, an
// m×m row-major matrix (m ≥ N) whose other entries the caller has set,
// leaving those it does not name untouched.
func (s *SparseAdj) Scatter(dst []float32, m int) error {
	if m < s.N || len(dst) != m*m {
		return fmt.Errorf("%w: scatter a %d×%d adjacency into %d values as %d×%d", ErrShape, s.N, s.N, len(dst), m, m)
	}
	return s.scatter(dst, m)
}

func (s *SparseAdj) scatter(dst []float32, m int) error {
	n := s.N
	if s.W != nil && len(s.W) != len(s.Idx) {
		return fmt.Errorf("%w: sparse adjacency with %d positions and %d weights", ErrShape, len(s.Idx), len(s.W))
	}
	for k, p := range s.Idx {
		if int64(p) >= int64(n)*int64(n) {
			return fmt.Errorf("%w: sparse adjacency position %d outside %d×%d", ErrShape, p, n, n)
		}
		w := float32(1)
		if s.W != nil {
			w = s.W[k]
		}
		i, j := int(p)/n, int(p)%n
		dst[i*m+j] = w
	}
	return nil
}

// Entries returns the number of stored (non-zero) entries.
func (s *SparseAdj) Entries() int { return len(s.Idx) }

// Bytes returns the memory the entries take (positions and weights), not
// counting the slice headers.
func (s *SparseAdj) Bytes() int64 { return 4*int64(len(s.Idx)) + 4*int64(len(s.W)) }
