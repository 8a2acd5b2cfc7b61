package command

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/fasd-db/fasd/fasd"
	"github.com/fasd-db/fasd/fasd/pipeline"
)

// scoreWriter writes fasd eval --scores: JSON lines, per seed one line
// with the split and the labels, then one line per variant with P(1) per
// node at the selected epoch, so decision rules can be studied offline
// without retraining.
type scoreWriter struct {
	path string
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
}

// scoreSeed is the first line of a seed in the --scores file.
type scoreSeed struct {
	Seed   uint64   `json:"seed"`
	Labels []int8   `json:"labels"`
	Sens   []int8   `json:"sens"`
	Train  []uint32 `json:"train"`
	Val    []uint32 `json:"val"`
	Test   []uint32 `json:"test"`
}

// scoreVariant is a variant's line in the --scores file.
type scoreVariant struct {
	Seed      uint64    `json:"seed"`
	Variant   string    `json:"variant"`
	Threshold float64   `json:"threshold"`
	BestEpoch int       `json:"best_epoch"`
	P1        scoreList `json:"p1"`
}

// scoreList is P(1) per node; a node without a prediction (NaN: in no
// subgraph) is written as null.
type scoreList []float32

// MarshalJSON implements json.Marshaler.
func (l scoreList) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 12*len(l)+2)
	b = append(b, '[')
	for i, x := range l {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return append(b, ']'), nil
}

func createScoreWriter(path string) (*scoreWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--scores: %w", err)
	}
	w := bufio.NewWriter(f)
	return &scoreWriter{path: path, f: f, w: w, enc: json.NewEncoder(w)}, nil
}

func (s *scoreWriter) seed(seed uint64, in *pipeline.Input) error {
	line := scoreSeed{Seed: seed, Labels: in.Labels, Sens: in.Sens}
	for v, sp := range in.Split {
		switch sp {
		case fasd.SplitTrain:
			line.Train = append(line.Train, uint32(v))
		case fasd.SplitVal:
			line.Val = append(line.Val, uint32(v))
		case fasd.SplitTest:
			line.Test = append(line.Test, uint32(v))
		}
	}
	if err := s.enc.Encode(line); err != nil {
		return fmt.Errorf("--scores %s: %w", s.path, err)
	}
	return nil
}

func (s *scoreWriter) variant(seed uint64, vr *pipeline.VariantResult) error {
	p1 := make(scoreList, len(vr.Scores))
	for i, p := range vr.Scores {
		p1[i] = float32(p)
	}
	line := scoreVariant{Seed: seed, Variant: string(vr.Variant), Threshold: float64(vr.Threshold), BestEpoch: vr.BestEpoch, P1: p1}
	if err := s.enc.Encode(line); err != nil {
		return fmt.Errorf("--scores %s: %w", s.path, err)
	}
	return nil
}

// close flushes and closes the file; the first error wins.
func (s *scoreWriter) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--scores %s: %w", s.path, err)
	}
	return nil
}
