package autodiff

import "github.com/fasd-db/fasd/fasd/tensor"

// The ReLU kernels are tensor's (branch-free, eight float32 lanes at a
// time in AVX2 where available); the results are those of the branching
// loops bit for bit, NaNs included.

// reluTo sets y[i] = max(x[i], 0); y may be x.
func reluTo[T Float](y, x []T) { tensor.ReLUTo(y, x) }

// reluGradTo sets ga[i] = g[i] where y[i] > 0, else 0.
func reluGradTo[T Float](ga, g, y []T) { tensor.ReLUGradTo(ga, g, y) }
