package fasd

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// SamplerMode selects the subgraph sampler of docs/method.md §2.
type SamplerMode uint8

const (
	// SamplerAlg3 is the paper's Algorithm 3 taken literally (default):
	// breadth-first, but Depth counts expanded nodes, not hops.
	SamplerAlg3 SamplerMode = iota
	// SamplerHop samples Fanout neighbours of every frontier node, hop by
	// hop, to Depth hops.
	SamplerHop
)

var samplerModeNames = [...]string{"alg3", "hop"}

// Names lists the names of the values, indexed by value: alg3, hop.
func (SamplerMode) Names() []string { return slices.Clone(samplerModeNames[:]) }

// String returns the value's name.
func (v SamplerMode) String() string { return enumString(samplerModeNames[:], uint8(v), "SamplerMode") }

// EdgeMode selects which edges a sampled subgraph keeps.
type EdgeMode uint8

const (
	// EdgesSampled keeps only the pairs (v, w) with w drawn from v's list
	// (default).
	EdgesSampled EdgeMode = iota
	// EdgesInduced keeps every edge of the graph between two members; the
	// graph must implement NeighborLister.
	EdgesInduced
)

var edgeModeNames = [...]string{"sampled", "induced"}

// Names lists the names of the values, indexed by value: sampled, induced.
func (EdgeMode) Names() []string { return slices.Clone(edgeModeNames[:]) }

// String returns the value's name.
func (v EdgeMode) String() string { return enumString(edgeModeNames[:], uint8(v), "EdgeMode") }

// SampleOptions configures subgraph sampling. The zero value is not valid:
// Depth and Fanout must be set (NBA: 2 and 10; Pokec: 3 and 10).
type SampleOptions struct {
	Mode SamplerMode
	// Depth is d ≥ 1: the expansion budget under SamplerAlg3, the number of
	// hops under SamplerHop.
	Depth int
	// Fanout is k ≥ 1, the neighbours drawn per expanded node.
	Fanout int
	Edges  EdgeMode
	// MaxNodes caps the node count (0 = no cap). Nodes are admitted in
	// discovery (BFS) order; a drawn neighbour that would exceed the cap is
	// dropped together with its edge and is never expanded.
	MaxNodes int
}

// Validate reports every invalid field, each wrapping ErrInvalidOptions.
func (o *SampleOptions) Validate() error {
	var errs []error
	if o.Mode > SamplerHop {
		errs = append(errs, fmt.Errorf("%w: unknown sampler mode %d", ErrInvalidOptions, o.Mode))
	}
	if o.Edges > EdgesInduced {
		errs = append(errs, fmt.Errorf("%w: unknown edge mode %d", ErrInvalidOptions, o.Edges))
	}
	if o.Depth < 1 {
		errs = append(errs, fmt.Errorf("%w: depth %d, want ≥ 1", ErrInvalidOptions, o.Depth))
	}
	if o.Fanout < 1 {
		errs = append(errs, fmt.Errorf("%w: fanout %d, want ≥ 1", ErrInvalidOptions, o.Fanout))
	}
	if o.MaxNodes < 0 {
		errs = append(errs, fmt.Errorf("%w: max nodes %d, want ≥ 0", ErrInvalidOptions, o.MaxNodes))
	}
	return errors.Join(errs...)
}

// MaxSize returns the largest node count a sample can have: 1 + d·k under
// SamplerAlg3, 1 + k + … + k^d under SamplerHop (saturating), and at most
// MaxNodes when a cap is set.
func (o *SampleOptions) MaxSize() int {
	const limit = 1 << 40
	var b int
	switch o.Mode {
	case SamplerHop:
		b, p := 1, 1
		for range o.Depth {
			p = min(p*o.Fanout, limit)
			b = min(b+p, limit)
		}
		return capSize(b, o.MaxNodes)
	default:
		b = 1 + o.Depth*o.Fanout
	}
	return capSize(b, o.MaxNodes)
}

func capSize(b, maxNodes int) int {
	if maxNodes > 0 {
		return min(b, maxNodes)
	}
	return b
}

// Sample is the structure of one sampled subgraph.
type Sample struct {
	// Nodes maps local index → global id in discovery order; Nodes[0] is
	// the root.
	Nodes []uint32
	// Edges lists the undirected local edges (u, v) with u < v, sorted.
	Edges [][2]int32
	// Expanded lists the local indices whose neighbour lists were read, in
	// reading order. With EdgesSampled these are the expanded nodes (at most
	// Depth of them under SamplerAlg3). With EdgesInduced every member's list
	// is read to collect the edges, so the expanded nodes come first and the
	// remaining members follow in local order.
	Expanded []int32
}

// Sampler draws subgraphs. It keeps scratch buffers, so one Sampler must not
// be used by several goroutines at once; create one per goroutine.
type Sampler struct {
	opt     SampleOptions
	index   map[uint32]int32 // global → local
	edgeSet map[uint64]struct{}
	visited []bool
	queue   []int32
	next    []int32
	members []int32
	nb      []uint32
}

// NewSampler validates opt and returns a Sampler.
func NewSampler(opt SampleOptions) (*Sampler, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{
		opt:     opt,
		index:   make(map[uint32]int32),
		edgeSet: make(map[uint64]struct{}),
	}, nil
}

// Options returns the sampler's options.
func (s *Sampler) Options() SampleOptions { return s.opt }

// Sample draws the subgraph rooted at root into dst, reusing its slices.
// Randomness comes only from rng, which the caller seeds per root (see
// RootSeed and NewRand); the result depends only on the generator state and
// on the neighbour lists listed in dst.Expanded.
//
// Algorithm 3 (SamplerAlg3), with Q a FIFO of local indices:
//
//	Q ← [root]; budget ← d
//	while Q not empty and budget > 0:
//		v ← pop front; if v was expanded: continue
//		S ← SampleNeighbors(v, k)          // draw order
//		for w in S: admit w if new (and under MaxNodes); if admitted or
//		           already a member: add edge {v,w}, push w
//		budget ← budget − 1
//
// SamplerHop expands every node of frontier F_{h−1} in discovery order for
// h = 1..d; the newly admitted nodes form F_h. With EdgesInduced the sampled
// edges are replaced by all graph edges among the members.
func (s *Sampler) Sample(g NeighborSampler, root uint32, rng *rand.Rand, dst *Sample) error {
	s.reset(dst)
	s.admit(dst, root)
	var err error
	switch s.opt.Mode {
	case SamplerHop:
		err = s.sampleHop(g, rng, dst)
	default:
		err = s.sampleAlg3(g, rng, dst)
	}
	if err != nil {
		return fmt.Errorf("sample root %d: %w", root, err)
	}
	if s.opt.Edges == EdgesInduced {
		if err := s.induce(g, dst); err != nil {
			return fmt.Errorf("sample root %d: %w", root, err)
		}
	}
	slices.SortFunc(dst.Edges, func(a, b [2]int32) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	return nil
}

func (s *Sampler) reset(dst *Sample) {
	clear(s.index)
	clear(s.edgeSet)
	s.visited = s.visited[:0]
	s.queue = s.queue[:0]
	s.next = s.next[:0]
	dst.Nodes = dst.Nodes[:0]
	dst.Edges = dst.Edges[:0]
	dst.Expanded = dst.Expanded[:0]
}

// admit adds global node v as a new member and returns its local index, or
// −1 if the cap is reached.
func (s *Sampler) admit(dst *Sample, v uint32) int32 {
	if s.opt.MaxNodes > 0 && len(dst.Nodes) >= s.opt.MaxNodes {
		return -1
	}
	l := int32(len(dst.Nodes))
	dst.Nodes = append(dst.Nodes, v)
	s.index[v] = l
	s.visited = append(s.visited, false)
	return l
}

func (s *Sampler) addEdge(dst *Sample, u, v int32) {
	if u > v {
		u, v = v, u
	}
	key := uint64(uint32(u))<<32 | uint64(uint32(v))
	if _, ok := s.edgeSet[key]; ok {
		return
	}
	s.edgeSet[key] = struct{}{}
	dst.Edges = append(dst.Edges, [2]int32{u, v})
}

// expand draws the neighbours of local node v, admits new ones, adds the
// edges and returns the local indices of the members among them (admitted
// or already present), appended to out.
func (s *Sampler) expand(g NeighborSampler, rng *rand.Rand, dst *Sample, v int32, out []int32) ([]int32, error) {
	s.visited[v] = true
	dst.Expanded = append(dst.Expanded, v)
	gv := dst.Nodes[v]
	var err error
	s.nb, err = g.SampleNeighbors(gv, s.opt.Fanout, rng, s.nb[:0])
	if err != nil {
		return out, fmt.Errorf("neighbours of %d: %w", gv, err)
	}
	if err := checkDraw(gv, s.opt.Fanout, s.nb); err != nil {
		return out, err
	}
	for _, w := range s.nb {
		lw, ok := s.index[w]
		if !ok {
			if lw = s.admit(dst, w); lw < 0 {
				continue
			}
		}
		s.addEdge(dst, v, lw)
		out = append(out, lw)
	}
	return out, nil
}

// checkDraw verifies the NeighborSampler contract on one draw.
func checkDraw(v uint32, k int, nb []uint32) error {
	if len(nb) > k {
		return fmt.Errorf("%w: %d neighbours of %d returned for k = %d", ErrSampler, len(nb), v, k)
	}
	for i, w := range nb {
		if w == v {
			return fmt.Errorf("%w: node %d returned as its own neighbour", ErrSampler, v)
		}
		for _, x := range nb[:i] {
			if x == w {
				return fmt.Errorf("%w: neighbour %d of %d returned twice", ErrSampler, w, v)
			}
		}
	}
	return nil
}

func (s *Sampler) sampleAlg3(g NeighborSampler, rng *rand.Rand, dst *Sample) error {
	s.queue = append(s.queue, 0)
	budget := s.opt.Depth
	var err error
	for head := 0; head < len(s.queue) && budget > 0; head++ {
		v := s.queue[head]
		if s.visited[v] {
			continue
		}
		if s.queue, err = s.expand(g, rng, dst, v, s.queue); err != nil {
			return err
		}
		budget--
	}
	return nil
}

func (s *Sampler) sampleHop(g NeighborSampler, rng *rand.Rand, dst *Sample) error {
	frontier := append(s.queue[:0], 0)
	// frontier and s.next are two distinct buffers, swapped every hop;
	// s.queue takes frontier back on every return, the failed ones
	// included, or a draw that fails half-way (a NeighborSampler error)
	// would leave s.queue and s.next on one array, and the next Sample
	// would overwrite its frontier while reading it.
	defer func() { s.queue = frontier }()
	for range s.opt.Depth {
		next := s.next[:0]
		for _, v := range frontier {
			before := len(dst.Nodes)
			var err error
			if s.members, err = s.expand(g, rng, dst, v, s.members[:0]); err != nil {
				return err
			}
			// The new members are exactly the local indices ≥ before, in
			// admission order.
			for l := before; l < len(dst.Nodes); l++ {
				next = append(next, int32(l))
			}
		}
		// Swap the two buffers: the old frontier is no longer read.
		frontier, s.next = next, frontier
		if len(frontier) == 0 {
			break
		}
	}
	return nil
}

func (s *Sampler) induce(g NeighborSampler, dst *Sample) error {
	lister, ok := g.(NeighborLister)
	if !ok {
		return fmt.Errorf("%w: induced edges need a NeighborLister, got %T", ErrNotSupported, g)
	}
	clear(s.edgeSet)
	dst.Edges = dst.Edges[:0]
	for l := range dst.Nodes {
		if !s.visited[l] {
			dst.Expanded = append(dst.Expanded, int32(l))
		}
	}
	for _, u := range dst.Expanded {
		var err error
		s.nb, err = lister.Neighbors(dst.Nodes[u], s.nb[:0])
		if err != nil {
			return fmt.Errorf("neighbours of %d: %w", dst.Nodes[u], err)
		}
		for _, w := range s.nb {
			if lw, ok := s.index[w]; ok && lw != u {
				s.addEdge(dst, u, lw)
			}
		}
	}
	return nil
}

// NodeSource supplies the per-node data of a subgraph by global id.
type NodeSource interface {
	// NodeFeatures writes the D features of v into dst (len(dst) = D).
	NodeFeatures(v uint32, dst []float32) error
	// NodeAttrs returns the sensitive attribute (−1 unknown), the label (−1
	// unlabelled) and the split of v.
	NodeAttrs(v uint32) (s, y int8, split Split, err error)
}

// ArrayNodes is a NodeSource over dense arrays indexed by global id:
// X is NumNodes×D row-major.
type ArrayNodes struct {
	D     int
	X     []float32
	S     []int8
	Y     []int8
	Split []Split
}

// NodeFeatures implements NodeSource.
func (a *ArrayNodes) NodeFeatures(v uint32, dst []float32) error {
	lo := int64(v) * int64(a.D)
	if len(dst) != a.D || lo+int64(a.D) > int64(len(a.X)) {
		return fmt.Errorf("%w: features of node %d (D = %d, %d values, dst %d)", ErrShape, v, a.D, len(a.X), len(dst))
	}
	copy(dst, a.X[lo:lo+int64(a.D)])
	return nil
}

// NodeAttrs implements NodeSource.
func (a *ArrayNodes) NodeAttrs(v uint32) (int8, int8, Split, error) {
	if int64(v) >= int64(len(a.S)) || int64(v) >= int64(len(a.Y)) || int64(v) >= int64(len(a.Split)) {
		return 0, 0, 0, fmt.Errorf("%w: attributes of node %d out of range", ErrShape, v)
	}
	return a.S[v], a.Y[v], a.Split[v], nil
}

// NodeFuncs adapts plain callbacks to a NodeSource. Features must be set;
// a nil Sensitive or Label reports −1 (unknown) and a nil Split SplitNone.
type NodeFuncs struct {
	Features  func(v uint32, dst []float32) error
	Sensitive func(v uint32) int8
	Label     func(v uint32) int8
	Split     func(v uint32) Split
}

// NodeFeatures implements NodeSource.
func (f *NodeFuncs) NodeFeatures(v uint32, dst []float32) error {
	if f.Features == nil {
		return fmt.Errorf("%w: NodeFuncs.Features is nil", ErrNotSupported)
	}
	return f.Features(v, dst)
}

// NodeAttrs implements NodeSource.
func (f *NodeFuncs) NodeAttrs(v uint32) (int8, int8, Split, error) {
	s, y, sp := int8(-1), int8(-1), SplitNone
	if f.Sensitive != nil {
		s = f.Sensitive(v)
	}
	if f.Label != nil {
		y = f.Label(v)
	}
	if f.Split != nil {
		sp = f.Split(v)
	}
	return s, y, sp, nil
}

// BuildSubgraph turns a sample into a Subgraph with d features per node,
// reading node data from src. Edges get weight 1. dst's slices are reused
// when large enough. The result is validated.
func BuildSubgraph(smp *Sample, d int, src NodeSource, dst *Subgraph) error {
	n := len(smp.Nodes)
	if n == 0 {
		return fmt.Errorf("%w: empty sample", ErrInvalidSubgraph)
	}
	if d < 0 {
		return fmt.Errorf("%w: negative feature dimension %d", ErrShape, d)
	}
	dst.Nodes = append(dst.Nodes[:0], smp.Nodes...)
	dst.Expanded = append(dst.Expanded[:0], smp.Expanded...)
	dst.D = d
	dst.X = resize(dst.X, n*d)
	dst.A = resize(dst.A, n*n)
	clear(dst.A)
	dst.S = resize(dst.S, n)
	dst.Y = resize(dst.Y, n)
	dst.Split = resize(dst.Split, n)
	for l, v := range smp.Nodes {
		if err := src.NodeFeatures(v, dst.X[l*d:(l+1)*d]); err != nil {
			return fmt.Errorf("build subgraph of %d: %w", smp.Nodes[0], err)
		}
		s, y, sp, err := src.NodeAttrs(v)
		if err != nil {
			return fmt.Errorf("build subgraph of %d: %w", smp.Nodes[0], err)
		}
		dst.S[l], dst.Y[l], dst.Split[l] = s, y, sp
	}
	for _, e := range smp.Edges {
		u, v := int(e[0]), int(e[1])
		if u < 0 || v < 0 || u >= n || v >= n || u == v {
			return fmt.Errorf("%w: bad local edge (%d,%d) for %d nodes", ErrInvalidSubgraph, u, v, n)
		}
		dst.A[u*n+v] = 1
		dst.A[v*n+u] = 1
	}
	if err := dst.Validate(); err != nil {
		return fmt.Errorf("build subgraph of %d: %w", smp.Nodes[0], err)
	}
	return nil
}
