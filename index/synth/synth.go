package synth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fasd-db/fasd/index/dump"
)

// Config describes a synthetic biased graph. Every field is used as given
// (there are no zero-means-default fields); start from a preset.
type Config struct {
	Nodes     int     // number of nodes, ≥ 2
	AvgDegree float64 // expected mean degree of the undirected graph, ≥ 0
	Features  int     // feature columns, ≥ 0
	// BinaryFraction of the feature columns hold 0/1 indicators (rounded);
	// the others are continuous.
	BinaryFraction float64
	// GroupShare is the expected share of nodes in sensitive group 1.
	GroupShare float64
	// Homophily is the affinity of edges for the same sensitive group: a
	// pair in the same group is Homophily/(1-Homophily) times as likely to
	// be linked as a pair across groups. 0.5 means none.
	Homophily float64
	// LabelHomophily is the same affinity for the label; above 0.5 the graph
	// helps to predict labels.
	LabelHomophily float64
	// LabelCorrelation c ∈ [0, 1) ties the label to the sensitive group:
	// P(y=1 | s=0) = (1+c)/2 and P(y=1 | s=1) = (1-c)/2.
	LabelCorrelation float64
	// Signal is the per-feature effect size of the label (in noise standard
	// deviations, times a N(0,1) loading per feature).
	Signal float64
	// Leakage is the per-feature effect size of the sensitive attribute: how
	// much of s can be read from the features although s is not a feature.
	Leakage float64
	// Unlabelled is the fraction of nodes written with label -1.
	Unlabelled float64
	// UnknownSensitive is the fraction of nodes written with sensitive -1.
	UnknownSensitive float64
	// Reciprocal is the fraction of edges written in both directions (the
	// FairGNN files list some edges twice); the graph is the same.
	Reciprocal float64
	// Separate gives every feature column a single cause. Without it each
	// column carries both the label signal and the leak. With it a fraction
	// LeakShare of the continuous columns and of the binary columns (the
	// first ones of each kind, see LeakColumns) carries only the leak and
	// the others only the label signal, so a classifier restricted to
	// LabelColumns cannot read s from a node's own features.
	Separate bool
	// LeakShare is the fraction of leak-only columns with Separate, in
	// [0, 1]; ignored without it.
	LeakShare float64
	// Seed makes the output a function of the Config: same Config, same bytes.
	Seed uint64
}

// Small is the embedded default: about 2,000 nodes, average degree 10, 32
// features (half binary). A plain GCN on it is clearly unfair (see the
// package tests) and it generates in milliseconds.
func Small() Config {
	return Config{
		Nodes: 2000, AvgDegree: 10, Features: 32, BinaryFraction: 0.5,
		GroupShare: 0.35, Homophily: 0.8, LabelHomophily: 0.7,
		LabelCorrelation: 0.4, Signal: 0.15, Leakage: 0.3,
		Unlabelled: 0.2, UnknownSensitive: 0, Reciprocal: 0.1, Seed: 1,
	}
}

// Removable is the removable-bias graph: the size of Small, labels barely
// tied to the group (P(y=1 | s) = 0.51 vs 0.49), the label signal and the
// sensitive leak in separate columns, strongly group-homophilous edges and
// weak label homophily. A classifier on LabelColumns alone is accurate and
// nearly fair, while a plain GCN, which mixes every column over
// mostly same-group neighbourhoods, reads the group and is measurably
// unfair (see the package tests): the bias can be removed without giving up
// accuracy. Small is the opposite stress case, where the labels themselves
// differ by group and no accurate classifier is fair.
func Removable() Config {
	return Config{
		Nodes: 2000, AvgDegree: 10, Features: 32, BinaryFraction: 0.5,
		GroupShare: 0.35, Homophily: 0.9, LabelHomophily: 0.6,
		LabelCorrelation: 0.02, Signal: 0.3, Leakage: 0.6,
		Unlabelled: 0.2, UnknownSensitive: 0, Reciprocal: 0.1,
		Separate: true, LeakShare: 0.5, Seed: 1,
	}
}

// Pokec is sized like Pokec-z for scale benchmarks: 67,797 nodes, about
// 600,000 undirected edges, 270 features of which 95% binary.
func Pokec() Config {
	return Config{
		Nodes: 67797, AvgDegree: 2 * 600000.0 / 67797, Features: 270, BinaryFraction: 0.95,
		GroupShare: 0.35, Homophily: 0.9, LabelHomophily: 0.7,
		LabelCorrelation: 0.3, Signal: 0.1, Leakage: 0.2,
		Unlabelled: 0.6, UnknownSensitive: 0, Reciprocal: 0, Seed: 1,
	}
}

// ErrConfig reports an invalid Config.
var ErrConfig = errors.New("synth: invalid config")

// presets is the registry of generator presets, sorted by name.
var presets = []struct {
	name, about string
	config      func() Config
}{
	{"pokec", "Pokec-z sized, label-biased", Pokec},
	{"removable", "2,000 nodes, removable bias", Removable},
	{"small", "2,000 nodes, label-biased: the stress case", Small},
}

// DefaultPreset is the preset fasd gen uses when none is named.
const DefaultPreset = "small"

// Preset returns the configuration called name (see PresetNames).
func Preset(name string) (Config, error) {
	for _, p := range presets {
		if p.name == name {
			return p.config(), nil
		}
	}
	return Config{}, fmt.Errorf("%w: unknown preset %q (want %s)", ErrConfig, name, strings.Join(PresetNames(), ", "))
}

// PresetNames lists the preset names, sorted.
func PresetNames() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.name
	}
	return out
}

// PresetHelp describes the presets in one line, for help text.
func PresetHelp() string {
	parts := make([]string, len(presets))
	for i, p := range presets {
		parts[i] = p.name + " (" + p.about + ")"
	}
	return strings.Join(parts, ", ")
}

// Validate reports every out-of-range field, joined.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field string, v any, want string) {
		errs = append(errs, fmt.Errorf("%w: %s = %v, want %s", ErrConfig, field, v, want))
	}
	unit := func(field string, v float64, closedTop bool) {
		if !(v >= 0 && (v < 1 || closedTop && v == 1)) {
			if closedTop {
				bad(field, v, "in [0, 1]")
			} else {
				bad(field, v, "in [0, 1)")
			}
		}
	}
	if c.Nodes < 2 || c.Nodes > math.MaxInt32 {
		bad("Nodes", c.Nodes, "in [2, 2^31)")
	}
	if !(c.AvgDegree >= 0 && c.AvgDegree <= float64(c.Nodes-1)) {
		bad("AvgDegree", c.AvgDegree, "in [0, Nodes-1]")
	}
	if c.Features < 0 {
		bad("Features", c.Features, "≥ 0")
	}
	unit("BinaryFraction", c.BinaryFraction, true)
	if !(c.GroupShare > 0 && c.GroupShare < 1) {
		bad("GroupShare", c.GroupShare, "in (0, 1)")
	}
	if !(c.Homophily > 0 && c.Homophily < 1) {
		bad("Homophily", c.Homophily, "in (0, 1)")
	}
	if !(c.LabelHomophily > 0 && c.LabelHomophily < 1) {
		bad("LabelHomophily", c.LabelHomophily, "in (0, 1)")
	}
	unit("LabelCorrelation", c.LabelCorrelation, false)
	if !(c.Signal >= 0 && c.Signal <= 10) {
		bad("Signal", c.Signal, "in [0, 10]")
	}
	if !(c.Leakage >= 0 && c.Leakage <= 10) {
		bad("Leakage", c.Leakage, "in [0, 10]")
	}
	unit("Unlabelled", c.Unlabelled, false)
	unit("UnknownSensitive", c.UnknownSensitive, false)
	unit("Reciprocal", c.Reciprocal, true)
	if c.Separate {
		unit("LeakShare", c.LeakShare, true)
	}
	return errors.Join(errs...)
}

// binaryFeatures returns how many feature columns are binary.
func (c *Config) binaryFeatures() int {
	return int(math.Round(c.BinaryFraction * float64(c.Features)))
}

// leakOnly says whether feature column j (in Header order) carries only the
// sensitive leak: with Separate, the first round(LeakShare·n) columns of
// each kind (continuous, binary).
func (c *Config) leakOnly(j int) bool {
	if !c.Separate {
		return false
	}
	nb := c.binaryFeatures()
	nc := c.Features - nb
	if j < nc {
		return j < int(math.Round(c.LeakShare*float64(nc)))
	}
	return j-nc < int(math.Round(c.LeakShare*float64(nb)))
}

// LabelColumns returns the indices (in Header().Features order) of the
// columns that carry the label signal and nothing of s: with Separate, the
// columns that are not leak-only. Without Separate every column carries
// both, and LabelColumns returns nil.
func (c *Config) LabelColumns() []int {
	if !c.Separate {
		return nil
	}
	var out []int
	for j := range c.Features {
		if !c.leakOnly(j) {
			out = append(out, j)
		}
	}
	return out
}

// LeakColumns returns the indices of the columns that carry only the leak
// (nil without Separate).
func (c *Config) LeakColumns() []int {
	var out []int
	for j := range c.Features {
		if c.leakOnly(j) {
			out = append(out, j)
		}
	}
	return out
}

// Header returns the column names of the node file: user_id, sens, label,
// then the continuous features x0… and the binary features b0….
func (c *Config) Header() dump.Header {
	nb := c.binaryFeatures()
	h := dump.Header{ID: "user_id", Sensitive: "sens", Label: "label"}
	for j := range c.Features - nb {
		h.Features = append(h.Features, "x"+strconv.Itoa(j))
	}
	for j := range nb {
		h.Features = append(h.Features, "b"+strconv.Itoa(j))
	}
	return h
}

// NodeID is the id written for the node in row i: distinct for distinct
// rows and above 2^32, so loaders must use int64 ids.
func NodeID(i int) int64 { return 1<<33 + int64(uint32(i)*2654435761) }

// Stats describes what was written.
type Stats struct {
	Nodes, Features, BinaryFeatures int
	Edges                           int // undirected edges
	EdgeLines                       int // lines in the edge file (Edges plus reciprocal lines)
	SameGroupEdges                  int // edges whose endpoints share the true sensitive group
	Groups                          [2]int
	Labels                          [2]int
	Unlabelled, UnknownSensitive    int
}

// Homophily returns the fraction of edges inside one sensitive group.
func (s Stats) Homophily() float64 {
	if s.Edges == 0 {
		return math.NaN()
	}
	return float64(s.SameGroupEdges) / float64(s.Edges)
}

// Options control writing. The zero value writes plain files and reports no
// progress.
type Options struct {
	// Gzip compresses both files (names get ".gz").
	Gzip bool
	// Progress, if set, is called from the writing goroutine with the rows
	// written so far ("nodes", total Nodes) and the edges written so far
	// ("edges", total = the expected number of edges, an estimate).
	Progress func(phase string, done, total int64)
}

// Files are the paths of a written dump.
type Files struct{ Nodes, Edges string }

// FileNames returns the file names Write uses: those of the dump preset
// "synth", plus ".gz" when compressed.
func FileNames(gz bool) Files {
	p, _ := dump.LookupPreset("synth")
	f := Files{Nodes: p.NodeFile, Edges: p.EdgeFile}
	if gz {
		f.Nodes += ".gz"
		f.Edges += ".gz"
	}
	return f
}

// Write generates the graph of cfg into dir (created if needed) under the
// names of FileNames. Load it with the dump preset "synth". On error the
// partial files are removed.
func Write(ctx context.Context, dir string, cfg Config, opts *Options) (files Files, st Stats, err error) {
	if err := cfg.Validate(); err != nil {
		return Files{}, Stats{}, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, Stats{}, fmt.Errorf("synth: %w", err)
	}
	names := FileNames(o.Gzip)
	files = Files{Nodes: filepath.Join(dir, names.Nodes), Edges: filepath.Join(dir, names.Edges)}
	nf, err := dump.Create(files.Nodes)
	if err != nil {
		return Files{}, Stats{}, err
	}
	ef, err := dump.Create(files.Edges)
	if err != nil {
		nf.Close()
		os.Remove(files.Nodes)
		return Files{}, Stats{}, err
	}
	defer func() {
		err = errors.Join(err, nf.Close(), ef.Close())
		if err != nil {
			os.Remove(files.Nodes)
			os.Remove(files.Edges)
			files = Files{}
		}
	}()
	st, err = Generate(ctx, nf, ef, cfg, o.Progress)
	return files, st, err
}

// Generate writes the node file to nodes and the edge file to edges.
// progress may be nil. Memory is O(Nodes) (two bytes of attributes and a
// block index per node); edges are streamed in order of their smaller
// endpoint and never held.
func Generate(ctx context.Context, nodes, edges io.Writer, cfg Config, progress func(phase string, done, total int64)) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	if progress == nil {
		progress = func(string, int64, int64) {}
	}
	g := newGenerator(cfg)
	st := Stats{Nodes: cfg.Nodes, Features: cfg.Features, BinaryFeatures: g.nb}
	if err := g.writeNodes(ctx, nodes, &st, progress); err != nil {
		return st, err
	}
	if err := g.writeEdges(ctx, edges, &st, progress); err != nil {
		return st, err
	}
	return st, nil
}

// Block index of a node: 2*s + y over the true (unmasked) attributes.
func block(s, y int8) int { return int(2*s + y) }

type generator struct {
	cfg     Config
	r       *rand.Rand
	nb      int           // binary features
	s, y    []int8        // true attributes per node
	members [4][]int32    // nodes of each block, ascending
	mu      [4][]float64  // continuous feature means per block
	pb      [4][]float64  // binary feature probabilities per block
	p       [4][4]float64 // edge probability per block pair
	expect  float64       // expected number of edges
}

func newGenerator(cfg Config) *generator {
	g := &generator{cfg: cfg, r: rand.New(rand.NewPCG(cfg.Seed, 0x5eed_f00d_fa1d)), nb: cfg.binaryFeatures()}
	n := cfg.Nodes
	g.s, g.y = make([]int8, n), make([]int8, n)
	pos := [2]float64{(1 + cfg.LabelCorrelation) / 2, (1 - cfg.LabelCorrelation) / 2}
	for i := range n {
		var s, y int8
		if g.r.Float64() < cfg.GroupShare {
			s = 1
		}
		if g.r.Float64() < pos[s] {
			y = 1
		}
		g.s[i], g.y[i] = s, y
		k := block(s, y)
		g.members[k] = append(g.members[k], int32(i))
	}
	// Feature model: mean = a_j·z_y + b_j·z_s with z = ±1 and loadings
	// a_j ~ Signal·N(0,1), b_j ~ Leakage·N(0,1). Continuous features add
	// N(0,1) noise; binary features are Bernoulli(sigmoid(c_j + 2·mean))
	// with a sparse base rate c_j ~ N(-1.5, 0.5).
	nc := cfg.Features - g.nb
	for k := range 4 {
		g.mu[k] = make([]float64, nc)
		g.pb[k] = make([]float64, g.nb)
	}
	for j := range cfg.Features {
		a := cfg.Signal * g.r.NormFloat64()
		b := cfg.Leakage * g.r.NormFloat64()
		c := -1.5 + 0.5*g.r.NormFloat64()
		if cfg.Separate {
			// Same draws as without Separate; one loading is dropped.
			if cfg.leakOnly(j) {
				a = 0
			} else {
				b = 0
			}
		}
		for k := range 4 {
			zs, zy := float64(2*(k>>1)-1), float64(2*(k&1)-1)
			m := a*zy + b*zs
			if j < nc {
				g.mu[k][j] = m
			} else {
				g.pb[k][j-nc] = 1 / (1 + math.Exp(-(c + 2*m)))
			}
		}
	}
	// Edge model: a stochastic block model over the four (s, y) blocks with
	// affinity w = (h or 1-h)·(hy or 1-hy), scaled to the average degree.
	var weight [4][4]float64
	var sum float64
	for k := range 4 {
		for l := range 4 {
			w := 1 - cfg.Homophily
			if k>>1 == l>>1 {
				w = cfg.Homophily
			}
			if k&1 == l&1 {
				w *= cfg.LabelHomophily
			} else {
				w *= 1 - cfg.LabelHomophily
			}
			weight[k][l] = w
			nk, nl := float64(len(g.members[k])), float64(len(g.members[l]))
			switch {
			case k == l:
				sum += w * nk * (nk - 1) / 2
			case k < l:
				sum += w * nk * nl
			}
		}
	}
	scale := 0.0
	if sum > 0 {
		scale = cfg.AvgDegree * float64(n) / 2 / sum
	}
	for k := range 4 {
		for l := range 4 {
			g.p[k][l] = min(1, scale*weight[k][l])
			nk, nl := float64(len(g.members[k])), float64(len(g.members[l]))
			switch {
			case k == l:
				g.expect += g.p[k][l] * nk * (nk - 1) / 2
			case k < l:
				g.expect += g.p[k][l] * nk * nl
			}
		}
	}
	return g
}

// progressEvery is how many rows or edges pass between progress calls and
// context checks.
const progressEvery = 1 << 14

func (g *generator) writeNodes(ctx context.Context, w io.Writer, st *Stats, progress func(string, int64, int64)) error {
	cfg := g.cfg
	nw, err := dump.NewNodeWriter(w, cfg.Header())
	if err != nil {
		return err
	}
	nc := cfg.Features - g.nb
	feat := make([]float32, cfg.Features)
	for i := range cfg.Nodes {
		if i%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress("nodes", int64(i), int64(cfg.Nodes))
		}
		k := block(g.s[i], g.y[i])
		for j := range nc {
			feat[j] = float32(g.mu[k][j] + g.r.NormFloat64())
		}
		for j, p := range g.pb[k] {
			feat[nc+j] = 0
			if g.r.Float64() < p {
				feat[nc+j] = 1
			}
		}
		s, y := g.s[i], g.y[i]
		if cfg.UnknownSensitive > 0 && g.r.Float64() < cfg.UnknownSensitive {
			s = dump.Unknown
			st.UnknownSensitive++
		} else {
			st.Groups[s]++
		}
		if cfg.Unlabelled > 0 && g.r.Float64() < cfg.Unlabelled {
			y = dump.Unlabelled
			st.Unlabelled++
		} else {
			st.Labels[y]++
		}
		if err := nw.WriteRow(NodeID(i), s, y, feat); err != nil {
			return err
		}
	}
	progress("nodes", int64(cfg.Nodes), int64(cfg.Nodes))
	return nw.Flush()
}

// writeEdges samples the block model exactly: for each node u in order and
// each block l, every later member v > u of l is linked independently with
// probability p[block(u)][l]. Geometric skips make this O(edges).
func (g *generator) writeEdges(ctx context.Context, w io.Writer, st *Stats, progress func(string, int64, int64)) error {
	ew := dump.NewEdgeWriter(w)
	var logq [4][4]float64 // log(1-p), for geometric skips
	for k := range 4 {
		for l := range 4 {
			logq[k][l] = math.Log1p(-g.p[k][l])
		}
	}
	total := int64(math.Round(g.expect))
	var ptr [4]int // ptr[l]: first member of l greater than the current u
	next := int64(0)
	for u := range g.cfg.Nodes {
		if int64(st.Edges) >= next {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress("edges", int64(st.Edges), total)
			next = int64(st.Edges) + progressEvery
		}
		k := block(g.s[u], g.y[u])
		for l := range 4 {
			m := g.members[l]
			for ptr[l] < len(m) && int(m[ptr[l]]) <= u {
				ptr[l]++
			}
			p := g.p[k][l]
			if p <= 0 {
				continue
			}
			for pos := ptr[l] - 1; ; {
				if p >= 1 {
					pos++
				} else {
					// Number of failures before the next success.
					skip := math.Floor(math.Log(1-g.r.Float64()) / logq[k][l])
					if skip >= float64(len(m)) {
						break
					}
					pos += 1 + int(skip)
				}
				if pos >= len(m) {
					break
				}
				v := int(m[pos])
				if err := g.emit(ew, u, v, st); err != nil {
					return err
				}
			}
		}
	}
	progress("edges", int64(st.Edges), total)
	return ew.Flush()
}

func (g *generator) emit(ew *dump.EdgeWriter, u, v int, st *Stats) error {
	st.Edges++
	if g.s[u] == g.s[v] {
		st.SameGroupEdges++
	}
	a, b := NodeID(u), NodeID(v)
	if g.r.Uint64()&1 == 1 {
		a, b = b, a
	}
	st.EdgeLines++
	if err := ew.WriteEdge(a, b); err != nil {
		return err
	}
	if g.cfg.Reciprocal > 0 && g.r.Float64() < g.cfg.Reciprocal {
		st.EdgeLines++
		return ew.WriteEdge(b, a)
	}
	return nil
}

// ExpectedEdges returns the expected number of undirected edges of cfg
// (lower than AvgDegree·Nodes/2 only when a block probability had to be
// capped at 1).
func ExpectedEdges(cfg Config) (float64, error) {
	if err := cfg.Validate(); err != nil {
		return 0, err
	}
	return newGenerator(cfg).expect, nil
}
