package index

import (
	"context"
	"errors"
	"github.com/fasd-db/fasd/storage/storagetest"
	"math"
	"slices"
	"testing"
)

// Ensure that Scale maps values as documented: the loader's formula inside
// the range, extrapolated up to RangeSlack range widths beyond it,
// ErrOutOfRange further out (or clipped), ErrInvalid for non-finite values,
// a constant column only its constant, an unscaled graph float32(v).
func TestScaling_Scale(t *testing.T) {
	scaled := &Scaling{Scaled: true, Min: []float64{0, 5}, Max: []float64{10, 5}}
	raw := &Scaling{Scaled: false, Min: []float64{-2, 7}, Max: []float64{2, 7}}
	tests := []struct {
		name string
		s    *Scaling
		j    int
		v    float64
		clip bool
		want float32
		err  error
	}{
		{"min", scaled, 0, 0, false, -1, nil},
		{"max", scaled, 0, 10, false, 1, nil},
		{"middle", scaled, 0, 2.5, false, -0.5, nil},
		{"slack below", scaled, 0, -10, false, -3, nil},
		{"slack above", scaled, 0, 20, false, 3, nil},
		{"just beyond", scaled, 0, 20.001, false, 0, ErrOutOfRange},
		{"3.4e38", scaled, 0, 3.4e38, false, 0, ErrOutOfRange},
		{"1e30 below", scaled, 0, -1e30, false, 0, ErrOutOfRange},
		{"3.4e38 clipped", scaled, 0, 3.4e38, true, 3, nil},
		{"-1e30 clipped", scaled, 0, -1e30, true, -3, nil},
		{"NaN", scaled, 0, math.NaN(), false, 0, ErrInvalid},
		{"NaN clip", scaled, 0, math.NaN(), true, 0, ErrInvalid},
		{"Inf clip", scaled, 0, math.Inf(1), true, 0, ErrInvalid},
		{"constant", scaled, 1, 5, false, 0, nil},
		{"constant other", scaled, 1, 5.5, false, 0, ErrOutOfRange},
		{"constant clipped", scaled, 1, 99, true, 0, nil},
		{"raw", raw, 0, 1.25, false, 1.25, nil},
		{"raw slack", raw, 0, 6, false, 6, nil},
		{"raw beyond", raw, 0, 6.5, false, 0, ErrOutOfRange},
		{"raw clipped", raw, 0, -1e9, true, -6, nil},
		{"raw constant", raw, 1, 7, false, 7, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.s.Scale(tc.j, tc.v, tc.clip)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Scale(%v) = %v, %v; want error %v", tc.v, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Scale(%v) = %v, %v; want %v", tc.v, got, err, tc.want)
			}
			if err := tc.s.checkStored(tc.j, got); err != nil {
				t.Errorf("Scale's own value %v fails checkStored: %v", got, err)
			}
		})
	}
}

// Ensure that Load records the scaling of the dump, and that scaling a
// node file row again with it gives the stored features bit for bit.
func TestScaling_RecordedByLoad(t *testing.T) {
	s := openMem(t, backends[0])
	if _, err := Load(context.Background(), s, smallOptions(t, smallNodes, smallEdges)); err != nil {
		t.Fatal(err)
	}
	g, err := Open(s)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := g.Scaling()
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Scaled || !slices.Equal(sc.Min, []float64{0.5, 3}) || !slices.Equal(sc.Max, []float64{5.5, 8}) {
		t.Fatalf("scaling %+v", sc)
	}
	rows := [][2]float64{{0.5, 3}, {1.5, 4}, {2.5, 5}, {3.5, 6}, {4.5, 7}, {5.5, 8}}
	v, _ := g.View()
	defer v.Close()
	for u, row := range rows {
		stored, err := v.Features(uint32(u), nil)
		if err != nil {
			t.Fatal(err)
		}
		for j, x := range row {
			got, err := sc.Scale(j, x, false)
			if err != nil || math.Float32bits(got) != math.Float32bits(stored[j]) {
				t.Errorf("node %d column %d: Scale(%v) = %v, %v; stored %v", u, j, x, got, err, stored[j])
			}
		}
	}
}

// Ensure that the store refuses stored feature values beyond the recorded
// scaling (the guard under every write path) without changing anything,
// and that a graph of an older build without the record reports
// ErrNoScaling while its updates keep working.
func TestScaling_TxGuardAndOldStore(t *testing.T) {
	s := openMem(t, backends[0])
	if _, err := Load(context.Background(), s, smallOptions(t, smallNodes, smallEdges)); err != nil {
		t.Fatal(err)
	}
	g, err := Open(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before := storagetest.Dump(t, s)
	for _, f := range [][]float32{{3.4e38, 0}, {0, -1e30}, {3.01, 0}} {
		_, err := g.Update(ctx, func(tx *Tx) error {
			_, err := tx.AddNode(Node{ExternalID: 99, Sensitive: 0, Label: 1, Features: f})
			return err
		})
		if !errors.Is(err, ErrOutOfRange) {
			t.Errorf("AddNode %v: err %v, want ErrOutOfRange", f, err)
		}
		if _, err := g.SetFeatures(ctx, 0, f); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("SetFeatures %v: err %v, want ErrOutOfRange", f, err)
		}
	}
	if after := storagetest.Dump(t, s); after != before {
		t.Fatal("a refused update changed the store")
	}
	if _, err := g.SetFeatures(ctx, 0, []float32{2.5, -3}); err != nil {
		t.Fatalf("a value within the slack: %v", err)
	}
	// An older build's store: no scaling record.
	b := s.NewBatch()
	if err := b.Delete(keyScaling); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := g.Scaling(); !errors.Is(err, ErrNoScaling) {
		t.Errorf("Scaling of an old store: %v, want ErrNoScaling", err)
	}
	if _, err := g.SetFeatures(ctx, 0, []float32{7, 7}); err != nil {
		t.Errorf("old store: stored values are only checked for finiteness, got %v", err)
	}
	checkGraph(t, g)
	// A graph made by Create records nothing and needs nothing.
	if sc, err := newGraph(t, backends[0]).Scaling(); sc != nil || err != nil {
		t.Errorf("Create's graph: scaling %v, %v; want nil, nil", sc, err)
	}
}

// FuzzScale checks Scale on arbitrary columns and values: it never panics,
// a value it accepts maps to a finite stored value that checkStored
// accepts, a value inside the loaded range maps into [-1, 1] when scaled,
// and with clip every finite value is accepted.
func FuzzScale(f *testing.F) {
	f.Add(0.0, 10.0, 2.5, true, false)
	f.Add(0.0, 10.0, 3.4e38, true, false)
	f.Add(0.0, 10.0, 3.4e38, true, true)
	f.Add(5.0, 5.0, 5.0, true, false)
	f.Add(-2.0, 2.0, -1e30, false, true)
	f.Add(-1e308, 1e308, 0.0, true, false)
	f.Add(-3e38, 3e38, 3.3e38, false, false)
	f.Fuzz(func(t *testing.T, lo, hi, v float64, scaled, clip bool) {
		if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi {
			return
		}
		if !scaled && (math.Abs(lo) > math.MaxFloat32 || math.Abs(hi) > math.MaxFloat32) {
			return // the loader refuses such columns unscaled
		}
		s := &Scaling{Scaled: scaled, Min: []float64{lo}, Max: []float64{hi}}
		x, err := s.Scale(0, v, clip)
		finite := !math.IsNaN(v) && !math.IsInf(v, 0)
		if err != nil {
			if finite && clip {
				t.Fatalf("clip refused %v in [%v, %v]: %v", v, lo, hi, err)
			}
			return
		}
		if !finite {
			t.Fatalf("accepted %v", v)
		}
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("Scale(%v) in [%v, %v] = %v", v, lo, hi, x)
		}
		if err := s.checkStored(0, x); err != nil {
			t.Fatalf("Scale(%v) in [%v, %v] = %v, refused by checkStored: %v", v, lo, hi, x, err)
		}
		if scaled && v >= lo && v <= hi && (x < -1 || x > 1) {
			t.Fatalf("Scale(%v) in [%v, %v] = %v outside [-1, 1]", v, lo, hi, x)
		}
	})
}
