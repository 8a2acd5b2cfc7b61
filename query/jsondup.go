package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// CheckDuplicateKeys reports an object in the JSON document data that
// gives a key twice. encoding/json keeps the last value of a repeated key
// (and matches keys to fields without regard to case), so a request such
// as {"label": 0, "label": 1} would otherwise be taken silently; the
// decoders of this package and of the HTTP API refuse it. Keys are
// compared as encoding/json matches them to fields: without regard to
// case. A syntax error is left to the decoder that follows: the check
// reports nil for it.
func CheckDuplicateKeys(data []byte) error {
	type frame struct {
		obj     bool
		wantKey bool
		keys    map[string]bool
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, &frame{obj: true, wantKey: true, keys: map[string]bool{}})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].wantKey = true
				}
			}
			continue
		}
		if top == nil || !top.obj {
			continue
		}
		if !top.wantKey {
			top.wantKey = true // a scalar value
			continue
		}
		key, _ := tok.(string)
		fold := strings.ToLower(key)
		if top.keys[fold] {
			return fmt.Errorf("duplicate key %q in an object", key)
		}
		top.keys[fold] = true
		top.wantKey = false
	}
}

// readChecked reads the whole document from r and refuses repeated keys
// (CheckDuplicateKeys).
func readChecked(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if err := CheckDuplicateKeys(b); err != nil {
		return nil, err
	}
	return b, nil
}
