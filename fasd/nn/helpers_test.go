package nn

import (
	"math/rand/v2"

	"github.com/fasd-db/fasd/fasd/tensor"
)

// graphBatch is a padded batch: sizes[b] valid nodes out of n.
type graphBatch[T tensor.Float] struct {
	X, A tensor.Dense[T]
	Mask []T
}

// randBatch builds a padded batch with features in [-1,1] and a symmetric,
// zero-diagonal, continuous adjacency (entries of a 0/1 graph plus noise, as
// the noisy A_t fed to the score networks); padded rows/cols are zero.
func randBatch[T tensor.Float](rng *rand.Rand, n, d int, sizes []int, noise float64) graphBatch[T] {
	b := len(sizes)
	g := graphBatch[T]{X: tensor.New[T](b, n, d), A: tensor.New[T](b, n, n), Mask: make([]T, b*n)}
	for bi, sz := range sizes {
		for i := 0; i < sz; i++ {
			g.Mask[bi*n+i] = 1
			for k := 0; k < d; k++ {
				g.X.Data[(bi*n+i)*d+k] = T(2*rng.Float64() - 1)
			}
			for j := i + 1; j < sz; j++ {
				v := noise * rng.NormFloat64()
				if rng.Float64() < 0.4 {
					v++
				}
				g.A.Data[(bi*n+i)*n+j] = T(v)
				g.A.Data[(bi*n+j)*n+i] = T(v)
			}
		}
	}
	return g
}

// permute returns the batch with the nodes of subgraph b reordered by
// perms[b] (new node i is old node perms[b][i]).
func permute[T tensor.Float](g graphBatch[T], perms [][]int) graphBatch[T] {
	b, n, d := g.X.Shape.Dim(0), g.X.Shape.Dim(1), g.X.Shape.Dim(2)
	out := graphBatch[T]{X: tensor.New[T](b, n, d), A: tensor.New[T](b, n, n), Mask: make([]T, b*n)}
	for bi, p := range perms {
		for i := 0; i < n; i++ {
			out.Mask[bi*n+i] = g.Mask[bi*n+p[i]]
			copy(out.X.Data[(bi*n+i)*d:(bi*n+i+1)*d], g.X.Data[(bi*n+p[i])*d:])
			for j := 0; j < n; j++ {
				out.A.Data[(bi*n+i)*n+j] = g.A.Data[(bi*n+p[i])*n+p[j]]
			}
		}
	}
	return out
}
