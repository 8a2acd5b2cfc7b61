package query

import (
	"errors"
	"strings"
	"testing"
)

// Ensure that CheckDuplicateKeys finds a key repeated in any object, at
// any depth and in any letter case, and nothing else; and that
// DecodeUpdate and DecodeNodeEdit refuse such documents with ErrInvalid.
func TestCheckDuplicateKeys(t *testing.T) {
	for _, c := range []struct {
		doc string
		dup string // "" if none
	}{
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, `"a"`},
		{`{"a":1,"A":2}`, `"A"`},
		{`{"a":{"b":1},"c":[{"b":1},{"b":2}]}`, ""},
		{`{"a":{"b":1,"b":2}}`, `"b"`},
		{`[{"x":1},{"x":1,"y":[1,{"x":2,"x":3}]}]`, `"x"`},
		{`{"a":[1,2],"b":{"a":1},"a":3}`, `"a"`},
		{`{"a":"a","b":"a"}`, ""},
		{`{"a\u0007":1,"a\u0007":2}`, `"a\a"`},
		{`{"a":1,`, ""}, // a syntax error is the decoder's
	} {
		err := CheckDuplicateKeys([]byte(c.doc))
		switch {
		case c.dup == "" && err != nil:
			t.Errorf("%s: %v, want nil", c.doc, err)
		case c.dup != "" && (err == nil || !strings.Contains(err.Error(), "duplicate key "+c.dup)):
			t.Errorf("%s: %v, want duplicate key %s", c.doc, err, c.dup)
		}
	}
	if _, err := DecodeUpdate(strings.NewReader(`{"delete":[1],"delete":[2]}`)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("DecodeUpdate: %v", err)
	}
	if _, err := DecodeNodeEdit(strings.NewReader(`{"label":1,"label":0}`), 7); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("DecodeNodeEdit: %v", err)
	}
	if _, err := DecodeUpdate(strings.NewReader(`{"delete":[1],"clip":true}`)); err != nil {
		t.Errorf("DecodeUpdate of a valid document: %v", err)
	}
}
