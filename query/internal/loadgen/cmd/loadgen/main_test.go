package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Ensure that loadgen reads both id formats, requests each id's path and
// prints the summary; and that bad id files and non-loopback addresses
// are errors.
func TestRun(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	ids := filepath.Join(dir, "ids")
	os.WriteFile(ids, []byte("7\n\n{\"node\":3,\"id\":-9,\"probs\":[0.5,0.5]}\n"), 0o644)
	var out bytes.Buffer
	addr := strings.TrimPrefix(srv.URL, "http://")
	if err := run([]string{"-addr", addr, "-ids", ids, "-n", "10", "-c", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	if seen["/v1/nodes/7/prediction"] != 5 || seen["/v1/nodes/-9/prediction"] != 5 {
		t.Errorf("requests %v", seen)
	}
	if !strings.HasPrefix(out.String(), "10 requests in ") || !strings.Contains(out.String(), "status 200×10\nclient CPU ") {
		t.Errorf("output %q", out.String())
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("1\nx\n"), 0o644)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-addr", addr}, "-ids FILE is required"},
		{[]string{"-addr", addr, "-ids", bad}, "bad:2"},
		{[]string{"-addr", addr, "-ids", filepath.Join(dir, "none")}, "no such file"},
		{[]string{"-addr", "192.0.2.1:80", "-ids", ids}, "not a loopback"},
		{[]string{"-addr", addr, "-ids", ids, "-n", "0"}, "Requests 0"},
	} {
		if err := run(c.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want %q", c.args, err, c.msg)
		}
	}
}
