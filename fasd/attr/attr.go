package attr

import "fmt"

// Split tells which part of the train/validation/test split a node is in.
type Split uint8

// The splits. SplitNone marks nodes outside train ∪ val ∪ test
// (unlabelled nodes, labelled nodes dropped from the test set because
// their sensitive attribute is unknown, nodes added later).
const (
	SplitNone Split = iota
	SplitTrain
	SplitVal
	SplitTest
)

// Splits lists the three parts of the split, in order.
var Splits = [...]Split{SplitTrain, SplitVal, SplitTest}

// String returns "none", "train", "val" or "test".
func (s Split) String() string {
	switch s {
	case SplitNone:
		return "none"
	case SplitTrain:
		return "train"
	case SplitVal:
		return "val"
	case SplitTest:
		return "test"
	}
	return fmt.Sprintf("Split(%d)", uint8(s))
}

// Valid reports whether s is one of the four defined splits.
func (s Split) Valid() bool { return s <= SplitTest }

// ParseSplit parses the names String gives ("none", "train", "val",
// "test"); the empty string is SplitNone too.
func ParseSplit(name string) (Split, error) {
	for s := SplitNone; s <= SplitTest; s++ {
		if name == s.String() {
			return s, nil
		}
	}
	if name == "" {
		return SplitNone, nil
	}
	return 0, fmt.Errorf("split %q is not one of train, val, test, none", name)
}

// Unknown is the value of a sensitive attribute that is not known, and
// of a label that is missing (an unlabelled node): −1, next to the values
// 0 and 1.
const Unknown int8 = -1
