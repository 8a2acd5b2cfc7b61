package synth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/index/dump"
	"github.com/fasd-db/fasd/index/split"
)

// graph is a dump loaded into memory for the tests.
type graph struct {
	x      [][]float32 // scaled features
	s, y   []int8
	adj    [][]int32 // symmetric, no self-loops, no duplicates
	lines  int       // edge lines read
	edges  int       // distinct undirected edges
	self   int
	single int // pairs listed only once
}

func load(t *testing.T, files Files) *graph {
	t.Helper()
	p, err := dump.LookupPreset("synth")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := dump.AnalyzeFile(context.Background(), files.Nodes, p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := tab.OpenRows(files.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	g := &graph{}
	for rr.Next() {
		r := rr.Row()
		g.x = append(g.x, append([]float32(nil), r.Features...))
		g.s = append(g.s, r.Sensitive)
		g.y = append(g.y, r.Label)
	}
	if rr.Err() != nil {
		t.Fatal(rr.Err())
	}
	er, err := dump.OpenEdges(files.Edges)
	if err != nil {
		t.Fatal(err)
	}
	defer er.Close()
	seen := map[[2]int32]int{}
	g.adj = make([][]int32, len(g.x))
	for er.Next() {
		a, b := er.Edge()
		u, ok1 := tab.Resolve(a)
		v, ok2 := tab.Resolve(b)
		if !ok1 || !ok2 {
			t.Fatalf("line %d: unknown endpoint", er.Line())
		}
		g.lines++
		if u == v {
			g.self++
			continue
		}
		key := [2]int32{int32(min(u, v)), int32(max(u, v))}
		seen[key]++
		if seen[key] == 1 {
			g.adj[u] = append(g.adj[u], int32(v))
			g.adj[v] = append(g.adj[v], int32(u))
		}
	}
	if er.Err() != nil {
		t.Fatal(er.Err())
	}
	g.edges = len(seen)
	for _, n := range seen {
		if n == 1 {
			g.single++
		}
	}
	return g
}

// Ensure that the same Config gives the same bytes (plain and gzip) and that
// another seed gives other bytes.
func TestWrite_Deterministic(t *testing.T) {
	cfg := Small()
	cfg.Nodes = 500
	read := func(f Files) []byte {
		a, err := os.ReadFile(f.Nodes)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f.Edges)
		if err != nil {
			t.Fatal(err)
		}
		return append(a, b...)
	}
	for _, gz := range []bool{false, true} {
		f1, _, err := Write(context.Background(), t.TempDir(), cfg, &Options{Gzip: gz})
		if err != nil {
			t.Fatal(err)
		}
		f2, _, err := Write(context.Background(), t.TempDir(), cfg, &Options{Gzip: gz})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(read(f1), read(f2)) {
			t.Errorf("gzip=%v: same seed, different bytes", gz)
		}
		other := cfg
		other.Seed++
		f3, _, err := Write(context.Background(), t.TempDir(), other, &Options{Gzip: gz})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(read(f1), read(f3)) {
			t.Errorf("gzip=%v: different seeds, same bytes", gz)
		}
	}
}

// Ensure that the small preset parses back with the synth preset and has the
// promised shape: counts equal to Stats, no self-loops, duplicates only as
// reciprocal lines, average degree near the target, group homophily.
func TestWrite_Small(t *testing.T) {
	cfg := Small()
	var phases = map[string]int64{}
	files, st, err := Write(context.Background(), t.TempDir(), cfg, &Options{Gzip: true,
		Progress: func(phase string, done, total int64) { phases[phase] = done }})
	if err != nil {
		t.Fatal(err)
	}
	g := load(t, files)
	if len(g.x) != cfg.Nodes || len(g.x[0]) != cfg.Features || st.BinaryFeatures != 16 {
		t.Fatalf("%d nodes × %d features", len(g.x), len(g.x[0]))
	}
	var groups, labels [2]int
	unl := 0
	for i := range g.s {
		groups[g.s[i]]++
		if g.y[i] < 0 {
			unl++
		} else {
			labels[g.y[i]]++
		}
	}
	if groups != st.Groups || labels != st.Labels || unl != st.Unlabelled {
		t.Errorf("read groups %v labels %v unl %d, stats %+v", groups, labels, unl, st)
	}
	if g.self != 0 || g.edges != st.Edges || g.lines != st.EdgeLines || g.edges != g.single+(g.lines-g.edges) {
		t.Errorf("edges %d lines %d self %d single %d, stats %+v", g.edges, g.lines, g.self, g.single, st)
	}
	deg := 2 * float64(g.edges) / float64(cfg.Nodes)
	if math.Abs(deg-cfg.AvgDegree) > 0.05*cfg.AvgDegree {
		t.Errorf("average degree %.2f, want about %.0f", deg, cfg.AvgDegree)
	}
	if frac := float64(g.lines-g.edges) / float64(g.edges); math.Abs(frac-cfg.Reciprocal) > 0.02 {
		t.Errorf("reciprocal fraction %.3f, want about %.2f", frac, cfg.Reciprocal)
	}
	if h := st.Homophily(); h < 0.75 {
		t.Errorf("same-group edge fraction %.3f, want > 0.75", h)
	}
	share := float64(groups[1]) / float64(cfg.Nodes)
	if math.Abs(share-cfg.GroupShare) > 0.04 {
		t.Errorf("group-1 share %.3f", share)
	}
	if phases["nodes"] != int64(cfg.Nodes) || phases["edges"] != int64(st.Edges) {
		t.Errorf("last progress %v", phases)
	}
	// Binary columns hold only 0 and 1 before scaling, so -1 and 1 after.
	for i := range g.x {
		for j := cfg.Features - st.BinaryFeatures; j < cfg.Features; j++ {
			if v := g.x[i][j]; v != -1 && v != 1 && v != 0 {
				t.Fatalf("binary feature %d of node %d is %v", j, i, v)
			}
		}
	}
}

// proxy trains logistic regression on SGC features S^hops X (S the
// symmetric normalised adjacency with self-loops) by gradient descent on half
// of the labelled nodes and returns accuracy, ΔDP and the majority-class rate
// on the other half.
func proxy(t *testing.T, g *graph, hops int, seed uint64) (acc, ddp, majority float64) {
	t.Helper()
	return fitLogistic(t, g, sgc(g, hops), seed)
}

// sgc returns S^hops X.
func sgc(g *graph, hops int) [][]float64 {
	n, d := len(g.x), len(g.x[0])
	h := make([][]float64, n)
	for i := range h {
		h[i] = make([]float64, d)
		for j, v := range g.x[i] {
			h[i][j] = float64(v)
		}
	}
	for range hops {
		next := make([][]float64, n)
		for u := range n {
			next[u] = make([]float64, d)
			du := float64(len(g.adj[u]) + 1)
			add := func(v int, w float64) {
				for j := range d {
					next[u][j] += w * h[v][j]
				}
			}
			add(u, 1/du)
			for _, v := range g.adj[u] {
				add(int(v), 1/math.Sqrt(du*float64(len(g.adj[v])+1)))
			}
		}
		h = next
	}
	return h
}

// zscore standardises every column of h in place (mean 0, std 1), so that
// gradient descent treats propagated columns alike.
func zscore(h [][]float64) [][]float64 {
	n, d := len(h), len(h[0])
	for j := range d {
		var m, ss float64
		for i := range n {
			m += h[i][j]
		}
		m /= float64(n)
		for i := range n {
			ss += (h[i][j] - m) * (h[i][j] - m)
		}
		sd := math.Sqrt(ss / float64(n))
		for i := range n {
			h[i][j] = (h[i][j] - m) / max(sd, 1e-12)
		}
	}
	return h
}

// columns keeps the columns cols of h.
func columns(h [][]float64, cols []int) [][]float64 {
	out := make([][]float64, len(h))
	for i := range h {
		for _, j := range cols {
			out[i] = append(out[i], h[i][j])
		}
	}
	return out
}

// fitLogistic trains logistic regression on the rows h by gradient descent
// on half of the labelled nodes of g and returns accuracy, ΔDP and the
// majority-class rate on the other half.
func fitLogistic(t *testing.T, g *graph, h [][]float64, seed uint64) (acc, ddp, majority float64) {
	t.Helper()
	d := len(h[0])
	var labelled []uint32
	for i, y := range g.y {
		if y >= 0 {
			labelled = append(labelled, uint32(i))
		}
	}
	sp, err := split.Random(labelled, func(v uint32) bool { return g.s[v] >= 0 },
		split.Fractions{Train: 0.5}, rand.New(rand.NewPCG(seed, 7)))
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, d+1)
	grad := make([]float64, d+1)
	const lr, iters = 2.0, 400
	for range iters {
		clear(grad)
		for _, u := range sp.Train {
			z := w[d]
			for j := range d {
				z += w[j] * h[u][j]
			}
			e := 1/(1+math.Exp(-z)) - float64(g.y[u])
			for j := range d {
				grad[j] += e * h[u][j]
			}
			grad[d] += e
		}
		for j := range w {
			w[j] -= lr * grad[j] / float64(len(sp.Train))
		}
	}
	var correct, pos1 int
	var predBy, countBy [2]float64
	for _, u := range sp.Test {
		z := w[d]
		for j := range d {
			z += w[j] * h[u][j]
		}
		pred := 0
		if z > 0 {
			pred = 1
		}
		if pred == int(g.y[u]) {
			correct++
		}
		pos1 += int(g.y[u])
		predBy[g.s[u]] += float64(pred)
		countBy[g.s[u]]++
	}
	nt := float64(len(sp.Test))
	acc = float64(correct) / nt
	ddp = math.Abs(predBy[0]/countBy[0] - predBy[1]/countBy[1])
	majority = max(float64(pos1), nt-float64(pos1)) / nt
	return acc, ddp, majority
}

// Ensure that a plain GCN (SGC proxy) on the default preset is accurate and
// clearly unfair, and that without bias knobs the same proxy is fair.
func TestSmall_Unfair(t *testing.T) {
	files, _, err := Write(context.Background(), t.TempDir(), Small(), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := load(t, files)
	acc, ddp, maj := proxy(t, g, 2, 1)
	t.Logf("biased: acc %.3f (majority %.3f), ΔDP %.3f", acc, maj, ddp)
	if acc < 0.75 || acc < maj+0.15 {
		t.Errorf("accuracy %.3f, majority %.3f: want ≥ 0.75 and ≥ majority + 0.15", acc, maj)
	}
	if ddp < 0.2 {
		t.Errorf("ΔDP %.3f, want > 0.2", ddp)
	}

	fair := Small()
	fair.LabelCorrelation, fair.Leakage, fair.Homophily = 0, 0, 0.5
	files, _, err = Write(context.Background(), t.TempDir(), fair, nil)
	if err != nil {
		t.Fatal(err)
	}
	g = load(t, files)
	acc, ddp, maj = proxy(t, g, 2, 1)
	t.Logf("unbiased: acc %.3f (majority %.3f), ΔDP %.3f", acc, maj, ddp)
	if ddp > 0.08 || acc < maj+0.15 {
		t.Errorf("unbiased control: ΔDP %.3f (want < 0.08), accuracy %.3f (majority %.3f)", ddp, acc, maj)
	}
}

// Ensure that the sensitive attribute leaks into the features: logistic
// regression on raw features predicts s well above the majority rate, and
// not without Leakage.
func TestSmall_Leakage(t *testing.T) {
	for _, c := range []struct {
		leak   float64
		minGap float64 // accuracy - majority must be at least this (or at most -minGap)
	}{{0.3, 0.15}, {0, -0.05}} {
		cfg := Small()
		cfg.Leakage = c.leak
		files, _, err := Write(context.Background(), t.TempDir(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := load(t, files)
		// Predict s instead of y: swap the roles, no propagation.
		swapped := &graph{x: g.x, adj: g.adj, s: make([]int8, len(g.s)), y: make([]int8, len(g.s))}
		copy(swapped.y, g.s)
		acc, _, maj := proxy(t, swapped, 0, 2)
		t.Logf("leakage %.1f: s accuracy %.3f, majority %.3f", c.leak, acc, maj)
		if c.minGap > 0 && acc < maj+c.minGap {
			t.Errorf("leakage %.1f: accuracy %.3f, majority %.3f", c.leak, acc, maj)
		}
		if c.minGap < 0 && acc > maj-c.minGap {
			t.Errorf("no leakage: accuracy %.3f above majority %.3f", acc, maj)
		}
	}
}

// Ensure that invalid configurations are refused with every problem named.
func TestConfig_Validate(t *testing.T) {
	c := Config{Nodes: 1, AvgDegree: -1, Homophily: 1, LabelCorrelation: 1}
	err := c.Validate()
	if !errors.Is(err, ErrConfig) {
		t.Fatal(err)
	}
	for _, f := range []string{"Nodes", "AvgDegree", "GroupShare", "Homophily", "LabelHomophily", "LabelCorrelation"} {
		if !bytes.Contains([]byte(err.Error()), []byte(f+" =")) {
			t.Errorf("%s missing from %v", f, err)
		}
	}
	for _, name := range PresetNames() {
		p, err := Preset(name)
		if err != nil || p.Validate() != nil {
			t.Errorf("preset %s: %v %v", name, err, p.Validate())
		}
	}
	if _, err := Preset("huge"); !errors.Is(err, ErrConfig) {
		t.Errorf("Preset(huge) = %v", err)
	}
	if _, _, err := Write(context.Background(), t.TempDir(), c, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("Write(bad) = %v", err)
	}
}

// Ensure that a cancelled context stops generation and removes the files.
func TestWrite_Cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if _, _, err := Write(ctx, dir, Small(), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

// Ensure that the Pokec-sized preset has the promised size: about 600k
// distinct undirected edges, no self-loops or duplicates, 270 features.
func TestPokec_Size(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: generates 67,797 nodes × 270 features")
	}
	cfg := Pokec()
	var edges bytes.Buffer
	st, err := Generate(context.Background(), io.Discard, &edges, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(st.Edges)-600000) > 6000 || st.Features != 270 || st.BinaryFeatures != 257 {
		t.Errorf("stats %+v", st)
	}
	seen := make(map[[2]int64]struct{}, st.Edges)
	er := dump.NewEdgeReader(&edges, "pokec")
	for er.Next() {
		a, b := er.Edge()
		if a == b {
			t.Fatalf("self-loop at line %d", er.Line())
		}
		k := [2]int64{min(a, b), max(a, b)}
		if _, dup := seen[k]; dup {
			t.Fatalf("duplicate edge at line %d", er.Line())
		}
		seen[k] = struct{}{}
	}
	if er.Err() != nil || len(seen) != st.Edges {
		t.Errorf("%d edges read, %v", len(seen), er.Err())
	}
	t.Logf("pokec: %d edges, homophily %.3f, groups %v, labels %v, unlabelled %d",
		st.Edges, st.Homophily(), st.Groups, st.Labels, st.Unlabelled)
}

// BenchmarkGenerate_Pokec measures generating the Pokec-sized preset into
// io.Discard (CPU only, no disk).
func BenchmarkGenerate_Pokec(b *testing.B) {
	cfg := Pokec()
	for b.Loop() {
		if _, err := Generate(context.Background(), io.Discard, io.Discard, cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite_Pokec measures writing the Pokec-sized preset to disk,
// plain and gzip.
func BenchmarkWrite_Pokec(b *testing.B) {
	for _, gz := range []bool{false, true} {
		name := "plain"
		if gz {
			name = "gzip"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				if _, _, err := Write(context.Background(), dir, Pokec(), &Options{Gzip: gz}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// meanFit averages fitLogistic over three random halves.
func meanFit(t *testing.T, g *graph, h [][]float64) (acc, ddp, majority float64) {
	t.Helper()
	for seed := uint64(1); seed <= 3; seed++ {
		a, d, m := fitLogistic(t, g, h, seed)
		acc, ddp, majority = acc+a/3, ddp+d/3, majority+m/3
	}
	return acc, ddp, majority
}

// Ensure that the removable preset keeps its promise: the label-only
// columns say nothing about s while the leak-only ones give it away; a
// classifier on a node's own label-only columns is accurate and nearly fair
// (the labels are barely tied to s); and a plain GCN (SGC proxy over every
// column) is clearly unfair, because message passing over same-group
// neighbourhoods sharpens the leak.
func TestRemovable(t *testing.T) {
	cfg := Removable()
	files, st, err := Write(context.Background(), t.TempDir(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h := st.Homophily(); h < 0.85 {
		t.Errorf("same-group edge fraction %.3f, want ≥ 0.85", h)
	}
	g := load(t, files)
	own := zscore(sgc(g, 0))
	swapped := &graph{x: g.x, adj: g.adj, s: make([]int8, len(g.s)), y: g.s}
	acc, _, maj := meanFit(t, swapped, columns(own, cfg.LabelColumns()))
	t.Logf("s from label-only columns: accuracy %.3f, majority %.3f", acc, maj)
	if acc > maj+0.03 {
		t.Errorf("label-only columns predict s: accuracy %.3f, majority %.3f", acc, maj)
	}
	acc, _, maj = meanFit(t, swapped, columns(own, cfg.LeakColumns()))
	t.Logf("s from leak-only columns: accuracy %.3f, majority %.3f", acc, maj)
	if acc < maj+0.2 {
		t.Errorf("leak-only columns hide s: accuracy %.3f, majority %.3f", acc, maj)
	}
	fairAcc, fairDP, maj := meanFit(t, g, columns(own, cfg.LabelColumns()))
	t.Logf("own label-only columns: accuracy %.3f (majority %.3f), ΔDP %.3f", fairAcc, maj, fairDP)
	if fairAcc < 0.8 || fairAcc < maj+0.25 || fairDP > 0.08 {
		t.Errorf("own label-only columns: accuracy %.3f (majority %.3f), ΔDP %.3f: want accuracy ≥ 0.8 and ΔDP ≤ 0.08", fairAcc, maj, fairDP)
	}
	gcnAcc, gcnDP, _ := meanFit(t, g, zscore(sgc(g, 2)))
	t.Logf("SGC proxy over every column: accuracy %.3f, ΔDP %.3f", gcnAcc, gcnDP)
	if gcnDP < 0.15 || gcnDP < 3*fairDP {
		t.Errorf("SGC proxy ΔDP %.3f, want ≥ 0.15 and ≥ 3 × the label-only classifier's %.3f", gcnDP, fairDP)
	}
}

// Ensure that Separate splits every kind of column by LeakShare, that
// LabelColumns and LeakColumns partition the columns, and that an invalid
// LeakShare is refused only with Separate.
func TestConfig_Separate(t *testing.T) {
	for _, c := range []struct {
		features int
		binary   float64
		share    float64
		leak     []int
	}{
		{8, 0.5, 0.5, []int{0, 1, 4, 5}},
		{8, 0.5, 0, nil},
		{8, 0.5, 1, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{6, 0, 1.0 / 3, []int{0, 1}},
		{5, 0.4, 0.5, []int{0, 1, 3}}, // 3 continuous (round(1.5) = 2), 2 binary (1)
	} {
		cfg := Removable()
		cfg.Features, cfg.BinaryFraction, cfg.LeakShare = c.features, c.binary, c.share
		leak, label := cfg.LeakColumns(), cfg.LabelColumns()
		if !slices.Equal(leak, c.leak) || len(leak)+len(label) != c.features {
			t.Errorf("%+v: leak %v label %v", c, leak, label)
		}
		for _, j := range label {
			if slices.Contains(leak, j) {
				t.Errorf("%+v: column %d in both", c, j)
			}
		}
	}
	mixed := Small()
	if mixed.LabelColumns() != nil || mixed.LeakColumns() != nil {
		t.Error("mixed model has single-cause columns")
	}
	mixed.LeakShare = 2
	if err := mixed.Validate(); err != nil {
		t.Errorf("LeakShare checked without Separate: %v", err)
	}
	bad := Removable()
	bad.LeakShare = 1.5
	if err := bad.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "LeakShare") {
		t.Errorf("LeakShare 1.5: %v", err)
	}
}
