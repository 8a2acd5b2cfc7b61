package command

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// auditJSON is the shape of fasd audit --json (query.AuditReport).
type auditJSON struct {
	Set          string                   `json:"set"`
	Nodes        int                      `json:"nodes"`
	Missing      int                      `json:"missing"`
	Stale        int                      `json:"stale"`
	Fair         auditMetrics             `json:"fair"`
	Variants     map[string]*auditMetrics `json:"variants"`
	GraphVersion uint64                   `json:"graph_version"`
	Model        string                   `json:"model"`
}

type auditMetrics struct {
	Acc     float64 `json:"acc"`
	AUC     float64 `json:"auc"`
	F1      float64 `json:"f1"`
	MacroF1 float64 `json:"macro_f1"`
	DP      float64 `json:"delta_dp"`
	EO      float64 `json:"delta_eo"`
	Groups  [2]struct {
		N       int     `json:"n"`
		Acc     float64 `json:"acc"`
		PosRate float64 `json:"pos_rate"`
		TPR     float64 `json:"tpr"`
	} `json:"groups"`
}

// Ensure that fasd audit of freshly materialized views reproduces the
// training run's own test metrics for FASD and w/o Diffusion (the views
// are the pipeline's averaged predictions), prints both rows, maps empty
// groups to -1 in JSON, and rejects bad sets and missing stores.
func TestAuditCommand(t *testing.T) {
	db := fixtureStore(t, "views")
	out, err, code := run(t, "audit", "--db", db, "--json")
	if err != nil || code != ExitOK {
		t.Fatalf("audit: %v (exit %d)", err, code)
	}
	var rep auditJSON
	decodeStrict(t, out, &rep)
	if rep.Set != "test" || rep.Missing != 0 || rep.Stale != 0 || rep.Variants["no_diffusion"] == nil || rep.Model == "" {
		t.Fatalf("audit %+v", rep)
	}
	got := map[string]auditMetrics{"fasd": rep.Fair, "no_diffusion": *rep.Variants["no_diffusion"]}
	if len(fixture.run.Result.Variants) != 2 {
		t.Fatalf("train record: %+v", fixture.run)
	}
	for _, v := range fixture.run.Result.Variants {
		m, ok := got[v.Variant]
		if !ok {
			t.Fatalf("unexpected variant %q", v.Variant)
		}
		if rep.Nodes != v.Test.N || m.Groups[0].N+m.Groups[1].N != v.Test.N {
			t.Errorf("%s: audited %d nodes (groups %d+%d), the run tested %d", v.Variant, rep.Nodes, m.Groups[0].N, m.Groups[1].N, v.Test.N)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"Acc", m.Acc, v.Test.Acc}, {"ΔDP", m.DP, v.Test.DP}, {"ΔEO", m.EO, v.Test.EO},
			{"AUC", m.AUC, v.Test.AUC}, {"F1", m.F1, v.Test.F1}, {"macro-F1", m.MacroF1, v.Test.MacroF1}} {
			if math.Abs(c.got-c.want) > 1e-9 {
				t.Errorf("%s %s: audit %.6f, training run %.6f", v.Variant, c.name, c.got, c.want)
			}
		}
	}

	out, err, _ = run(t, "audit", "--db", db, "--set", "labelled")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"labelled nodes (graph v", "w/o Diffusion (before)", "FASD (after)"} {
		if !strings.Contains(out, want) {
			t.Errorf("text audit lacks %q:\n%s", want, out)
		}
	}
	var labelled int
	if _, err := fmt.Sscanf(out, "fairness audit of the views: %d labelled nodes", &labelled); err != nil || labelled <= rep.Nodes {
		t.Errorf("labelled audit of %d nodes (%v), test set %d", labelled, err, rep.Nodes)
	}
	out, err, _ = run(t, "audit", "--db", db)
	if err != nil || !strings.Contains(out, fmt.Sprintf("%7.2f %7.2f %7.2f", 100*rep.Fair.Acc, 100*rep.Fair.DP, 100*rep.Fair.EO)) {
		t.Errorf("text audit (%v) does not show the JSON figures:\n%s", err, out)
	}

	// Before materialize no test node has a view: nothing is evaluated,
	// and the undefined metrics come out as -1.
	out, err, _ = run(t, "audit", "--db", fixtureStore(t, "trained"), "--json")
	if err != nil {
		t.Fatal(err)
	}
	decodeStrict(t, out, &rep)
	if rep.Nodes != 0 || rep.Missing != fixture.run.Result.Variants[0].Test.N || rep.Fair.Acc != -1 || rep.Fair.Groups[1].TPR != -1 {
		t.Errorf("audit without views: %+v", rep)
	}

	checkErrCases(t, []errCase{
		{"bad set", []string{"audit", "--db", db, "--set", "everyone"}, ExitUsage, "everyone"},
		{"no db", []string{"audit"}, ExitUsage, "--db DIR is required"},
		{"bad workers", []string{"audit", "--db", db, "--workers", "-2"}, ExitUsage, "--workers"},
		{"no store", []string{"audit", "--db", filepath.Join(t.TempDir(), "absent")}, ExitStoreState, "no store"},
		{"no graph", []string{"audit", "--db", emptyStore(t)}, ExitStoreState, "no graph"},
		{"no model", []string{"audit", "--db", fixtureStore(t, "graph")}, ExitStoreState, "no trained models"},
	})
}
