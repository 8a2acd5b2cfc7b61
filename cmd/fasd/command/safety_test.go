package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fasd-db/fasd/httpapi"
	"github.com/fasd-db/fasd/index/synth"
	"github.com/fasd-db/fasd/storage/storagetest"
)

// featureJSON renders a feature vector of the fixture's columns: the
// midpoint of each column's loaded range, with first in column 0.
func featureJSON(mid []float64, first string) string {
	parts := make([]string, len(mid))
	for j, m := range mid {
		parts[j] = fmt.Sprint(m)
	}
	parts[0] = first
	return "[" + strings.Join(parts, ",") + "]"
}

// Ensure that the D3 repro no longer poisons the store: POST /v1/nodes with
// a feature of 3.4e38 (or 1e30) answers 400 naming the node and the
// column, as does an edit with it, the graph is unchanged, and afterwards
// refresh, check, train and materialize succeed with finite predictions.
// With "clip" the value is stored clipped to the window; DELETE and PATCH
// of nodes round trip over HTTP.
func TestHTTP_OverflowFeaturesRefusedStoreStillTrains(t *testing.T) {
	db := fixtureStore(t, "views")
	o := &EngineOptions{DB: db}
	e, _, err := o.openEngine(context.Background(), "test", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := e.Graph().Scaling()
	if err != nil || sc == nil || !sc.Scaled {
		t.Fatalf("fixture scaling %+v, %v", sc, err)
	}
	mid := make([]float64, len(sc.Min))
	for j := range mid {
		mid[j] = (sc.Min[j] + sc.Max[j]) / 2
	}
	col0 := e.Graph().Schema().Features[0]
	const token = "safety-test-token-0123456789"
	h := httpapi.NewHandler(e, &httpapi.Options{Token: token, AllowedHosts: []string{"example.com"}})
	do := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var eb struct {
			Error string `json:"error"`
		}
		if rec.Code != http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &eb) == nil {
			return rec.Code, eb.Error
		}
		return rec.Code, rec.Body.String()
	}
	before := storagetest.Dump(t, e.Graph().Store())
	newNode := func(first string, extra string) string {
		return fmt.Sprintf(`{"nodes":[{"id":999,"features":%s,"sensitive":1,"label":1,"split":"test","edges":[%d]}]%s}`,
			featureJSON(mid, first), synth.NodeID(0), extra)
	}
	for _, bad := range []string{"3.4e38", "1e30", "-1e30", fmt.Sprint(sc.Max[0] + 1.01*(sc.Max[0]-sc.Min[0]))} {
		code, body := do(http.MethodPost, "/v1/nodes", newNode(bad, ""))
		want := fmt.Sprintf(`nodes[0] (id 999): feature %q`, col0)
		if code != http.StatusBadRequest || !strings.Contains(body, want) || !strings.Contains(body, "far outside the loaded range") {
			t.Errorf("POST feature %s: %d %s, want 400 naming %s", bad, code, body, want)
		}
		code, body = do(http.MethodPatch, fmt.Sprintf("/v1/nodes/%d", synth.NodeID(3)), `{"features":`+featureJSON(mid, bad)+`}`)
		if code != http.StatusBadRequest || !strings.Contains(body, "far outside") {
			t.Errorf("PATCH feature %s: %d %s, want 400", bad, code, body)
		}
	}
	if storagetest.Dump(t, e.Graph().Store()) != before {
		t.Fatal("refused requests changed the store")
	}
	// Within the slack it is accepted; with clip, 3.4e38 is stored as the
	// window's end, scaled to 3.
	if code, body := do(http.MethodPost, "/v1/nodes", newNode("3.4e38", `,"clip":true`)); code != http.StatusOK {
		t.Fatalf("POST with clip: %d %s", code, body)
	}
	v, _ := e.Graph().View()
	u, err := v.InternalID(999)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := v.Features(u, nil)
	v.Close()
	if f[0] != 3 {
		t.Errorf("clipped feature stored as %v, want 3", f[0])
	}
	// Delete and edit round trips.
	gone := synth.NodeID(1)
	if code, body := do(http.MethodDelete, fmt.Sprintf("/v1/nodes/%d", gone), ""); code != http.StatusOK || !strings.Contains(body, `"nodes_deleted":1`) {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	for _, req := range [][3]string{
		{http.MethodGet, fmt.Sprintf("/v1/nodes/%d/prediction", gone), ""},
		{http.MethodDelete, fmt.Sprintf("/v1/nodes/%d", gone), ""},
		{http.MethodPatch, fmt.Sprintf("/v1/nodes/%d", gone), `{"label":1}`},
	} {
		if code, body := do(req[0], req[1], req[2]); code != http.StatusNotFound {
			t.Errorf("%s %s after delete: %d %s, want 404", req[0], req[1], code, body)
		}
	}
	if code, body := do(http.MethodPatch, "/v1/nodes", fmt.Sprintf(`{"edits":[{"id":%d,"label":0,"features":%s}]}`, synth.NodeID(2), featureJSON(mid, fmt.Sprint(sc.Min[0])))); code != http.StatusOK {
		t.Fatalf("PATCH /v1/nodes: %d %s", code, body)
	}
	if code, body := do(http.MethodDelete, "/v1/nodes", fmt.Sprintf(`{"ids":[%d,%d]}`, synth.NodeID(4), synth.NodeID(5))); code != http.StatusOK || !strings.Contains(body, `"nodes_deleted":2`) {
		t.Fatalf("DELETE /v1/nodes: %d %s", code, body)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"refresh", "--db", db},
		{"check", "--db", db},
		append([]string{"train", "--db", db}, tinyTrain...),
		{"materialize", "--db", db},
	} {
		if out, err, code := run(t, args...); err != nil {
			t.Fatalf("fasd %s: %v (exit %d)\n%s", args[0], err, code, out)
		}
	}
	n := 0
	for _, p := range predictAll(t, db) {
		if math.IsNaN(p.Probs[1]) || p.Probs[1] <= 0 || p.Probs[1] >= 1 {
			t.Fatalf("prediction %+v after the update", p)
		}
		if p.ID == gone {
			t.Fatalf("a deleted node is still predicted: %+v", p)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no predictions")
	}
}

// Ensure that fasd update deletes and edits nodes from files, refuses a
// feature far outside the loaded range (exit 3, node and column named)
// and an unknown id without changing the graph, and clips with --clip.
func TestUpdateCommand_DeleteEdit(t *testing.T) {
	db := fixtureStore(t, "views")
	stats := func() (version uint64, nodes, deleted int) {
		out, err, _ := run(t, "stats", "--db", db, "--json")
		var st struct {
			Version uint64 `json:"version"`
			Nodes   int    `json:"nodes"`
			Deleted int    `json:"deleted"`
		}
		if err != nil || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("stats: %v\n%s", err, out)
		}
		return st.Version, st.Nodes, st.Deleted
	}
	v0, n0, _ := stats()
	feats := make([]string, 6)
	for i := range feats {
		feats[i] = "0"
	}
	feats[2] = "1e30"
	big := writeFile(t, "big.json", fmt.Sprintf(`{"edits":[{"id":%d,"features":[%s]}]}`, synth.NodeID(7), strings.Join(feats, ",")))
	checkErrCases(t, []errCase{
		{"far outside", []string{"update", "--db", db, "--edit", big}, ExitBadInput, fmt.Sprintf("edits[0] (id %d): feature", synth.NodeID(7))},
		{"unknown id", []string{"update", "--db", db, "--delete", writeFile(t, "ids.txt", "# gone\n424242\n")}, ExitBadInput, "ids.txt:2: bad node id: node 424242 is not in the graph (never loaded, or deleted)"},
		{"not an id", []string{"update", "--db", db, "--delete", writeFile(t, "idx.txt", "\n12x\n")}, ExitBadInput, "idx.txt:2: bad node id"},
		{"bad units", []string{"update", "--db", db, "--edit", big, "--units", "feet"}, ExitUsage, "units"},
		{"edits in nodes file", []string{"update", "--db", db, "--nodes", big}, ExitUsage, "want {\"nodes\": [...]}"},
	})
	if v, _, _ := stats(); v != v0 {
		t.Fatalf("failed updates changed the graph: version %d → %d", v0, v)
	}
	ids := writeFile(t, "del.txt", fmt.Sprintf("%d  # first\n\n%d\n", synth.NodeID(8), synth.NodeID(9)))
	out, err, code := run(t, "update", "--db", db, "--delete", ids, "--edit", big, "--clip", "--refresh")
	if err != nil {
		t.Fatalf("update: %v (exit %d)", err, code)
	}
	if !strings.Contains(out, "+0/−2 nodes") || !strings.Contains(out, "complete true)") {
		t.Errorf("output:\n%s", out)
	}
	if v, n, d := stats(); v != v0+1 || n != n0-2 || d != 2 {
		t.Errorf("after delete: version %d nodes %d deleted %d; want %d, %d, 2", v, n, d, v0+1, n0-2)
	}
	if _, err, code := run(t, "predict", "--db", db, "--node", fmt.Sprint(synth.NodeID(8))); code != ExitFailure || !strings.Contains(err.Error(), "unknown node") {
		t.Errorf("predict of a deleted node: exit %d, %v", code, err)
	}
	if out, err, _ := run(t, "check", "--db", db); err != nil || !strings.Contains(out, "(2 of them deleted)") {
		t.Fatalf("check: %v\n%s", err, out)
	}
	if out, err, _ := run(t, "stats", "--db", db); err != nil || !strings.Contains(out, fmt.Sprintf("nodes      %d (and 2 deleted)", n0-2)) {
		t.Fatalf("stats: %v\n%s", err, out)
	}
}
