package fasd

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// Ensure the §9 invariants on random raw outputs: symmetric, zero diagonal,
// no entry in (0, τ), no negative entry, survivors continuous (or capped or
// binarised).
func TestPostProcess_Invariants(t *testing.T) {
	const n = 15
	rng := NewRand(1)
	for _, o := range []*PostOptions{nil, {}, {Tau: Some(0.3)}, {Clip01: true}, {Binarize: true}, {Tau: Some(1.2), Clip01: true}, {Tau: Some(0.0)}} {
		for range 20 {
			a := make([]float32, n*n)
			for i := range a {
				a[i] = float32(rng.NormFloat64()*0.8 + 0.3)
			}
			raw := slices.Clone(a)
			if err := PostProcess(a, n, o); err != nil {
				t.Fatal(err)
			}
			tau := DefaultTau
			if o != nil {
				tau = o.Tau.Or(DefaultTau)
			}
			for i := range n {
				if a[i*n+i] != 0 {
					t.Fatal("diagonal")
				}
				for j := range n {
					w := a[i*n+j]
					if w != a[j*n+i] {
						t.Fatal("asymmetric")
					}
					if i == j {
						continue
					}
					avg := 0.5 * (float64(raw[i*n+j]) + float64(raw[j*n+i]))
					want := 0.0
					if avg >= tau {
						want = avg
						if o != nil && o.Binarize {
							want = 1
						} else if o != nil && o.Clip01 {
							want = math.Min(avg, 1)
						}
					}
					if w != float32(want) {
						t.Fatalf("%+v: A[%d,%d] = %v, want %v", o, i, j, w, want)
					}
				}
			}
		}
	}
}

// Ensure hand-picked cases: continuous weights above 1 survive by default,
// the threshold is inclusive, NaN is pruned.
func TestPostProcess_Cases(t *testing.T) {
	a := []float32{
		3, 1.7, 0.5, float32(math.NaN()),
		1.7, 0, 0.49, -2,
		0.5, 0.49, 0, 0.6,
		float32(math.NaN()), -2, 0.4, 9,
	}
	if err := PostProcess(a, 4, nil); err != nil {
		t.Fatal(err)
	}
	want := []float32{
		0, 1.7, 0.5, 0,
		1.7, 0, 0, 0,
		0.5, 0, 0, 0.5,
		0, 0, 0.5, 0,
	}
	if !slices.Equal(a, want) {
		t.Errorf("got %v", a)
	}
	if err := PostProcess(a, 3, nil); !errors.Is(err, ErrShape) {
		t.Error(err)
	}
	if err := PostProcess(a, 4, &PostOptions{Tau: Some(-1.0)}); !errors.Is(err, ErrInvalidOptions) {
		t.Error(err)
	}
}

// Ensure the diagnostics on hand-built inputs.
func TestDiagnostics(t *testing.T) {
	if got := FeatureChange([]float32{3, 4}, []float32{3, 4}); got != 0 {
		t.Error(got)
	}
	if got := FeatureChange([]float32{3, 4}, []float32{0, 4}); math.Abs(got-0.6) > 1e-15 {
		t.Error(got)
	}
	if !math.IsInf(FeatureChange([]float32{0}, []float32{1}), 1) {
		t.Error("zero base")
	}
	before := []float32{
		0, 1, 1, 0,
		1, 0, 0, 1,
		1, 0, 0, 0,
		0, 1, 0, 0,
	}
	after := []float32{
		0, 0.8, 0, 2,
		0.8, 0, 0, 0.6,
		0, 0, 0, 0,
		2, 0.6, 0, 0,
	}
	st := CompareEdges(before, after, 4)
	want := EdgeStats{Before: 3, After: 3, Kept: 2, Removed: 1, Added: 1, MinWeight: 0.6, MaxWeight: 2, MeanWeight: (0.8 + 2 + 0.6) / 3}
	if st.Before != want.Before || st.After != want.After || st.Kept != want.Kept || st.Removed != want.Removed || st.Added != want.Added ||
		math.Abs(st.MinWeight-want.MinWeight) > 1e-7 || math.Abs(st.MaxWeight-want.MaxWeight) > 1e-7 || math.Abs(st.MeanWeight-want.MeanWeight) > 1e-7 {
		t.Errorf("got %+v, want %+v", st, want)
	}
	var tot EdgeStats
	tot.Add(st)
	tot.Add(EdgeStats{Before: 1, After: 1, Kept: 1, MinWeight: 5, MaxWeight: 5, MeanWeight: 5})
	tot.Add(EdgeStats{Before: 2, Removed: 2})
	if tot.Before != 6 || tot.After != 4 || tot.Kept != 3 || tot.Removed != 3 || tot.MaxWeight != 5 ||
		math.Abs(tot.MinWeight-0.6) > 1e-7 || math.Abs(tot.MeanWeight-(0.8+2+0.6+5)/4) > 1e-7 {
		t.Errorf("total %+v", tot)
	}
}

// Ensure that an explicit τ = 0 is not the default: it keeps every positive
// weight, while the unset τ prunes below DefaultTau.
func TestPostProcess_ExplicitZeroTau(t *testing.T) {
	for _, c := range []struct {
		name string
		o    *PostOptions
		want float32
	}{
		{"unset", &PostOptions{}, 0},
		{"nil", nil, 0},
		{"zero", &PostOptions{Tau: Some(0.0)}, 0.25},
		{"0.2", &PostOptions{Tau: Some(0.2)}, 0.25},
	} {
		a := []float32{0, 0.25, 0.25, 0}
		if err := PostProcess(a, 2, c.o); err != nil {
			t.Fatal(err)
		}
		if a[1] != c.want || a[2] != c.want {
			t.Errorf("%s: got %v, want off-diagonal %v", c.name, a, c.want)
		}
	}
}
