package command

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fasd-db/fasd/storage/postgres/pgtest"
)

// Ensure that serve --replica refuses a local store and a bad --poll
// before opening anything.
func TestServeReplica_Flags(t *testing.T) {
	db := fixtureStore(t, "views")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"serve", "--db", db, "--replica"}, "--replica needs --db postgres://"},
		{[]string{"serve", "--db", "postgres://127.0.0.1:1/x", "--replica", "--poll", "0s"}, "--poll 0s"},
		{[]string{"serve", "--db", db, "--poll", "1s"}, "--poll applies to a --replica only"},
	} {
		_, err, code := run(t, c.args...)
		if code != ExitUsage || err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: exit %d, %v; want exit %d with %q", c.args, code, err, ExitUsage, c.msg)
		}
	}
}

// Ensure that fasd serve --replica runs beside the writer's fasd serve on
// one PostgreSQL table, answers the writer's predictions, flags its answers
// stale after the writer's update until the writer refreshes, then answers
// the refreshed predictions, and refuses mutations with 403.
func TestServeReplica_Postgres(t *testing.T) {
	dir := fixtureStore(t, "views")
	ps := predictAll(t, dir)
	db := pgtest.CopyOf(t, dir)
	t.Setenv(tokenEnv, serveTestToken)
	writer, _, cancelW, doneW := startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0")
	replica, errOut, cancelR, doneR := startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0", "--replica", "--poll", "20ms")
	if d := errOut.String(); !strings.Contains(d, "read-only replica") || !strings.Contains(d, "mutations: refused (--replica)") {
		t.Errorf("replica start-up message:\n%s", errOut)
	}
	var ids []int64
	for _, p := range ps[:20] {
		ids = append(ids, p.ID)
	}
	get := func(base string, id int64) map[string]any { return getPrediction(t, base, id) }
	same := func(a, b map[string]any) bool {
		return fmt.Sprint(a["probs"], a["subgraphs"], a["graph_version"]) == fmt.Sprint(b["probs"], b["subgraphs"], b["graph_version"])
	}
	// Every replica answer is the writer's or flagged stale; wait returns
	// once every answer is fresh.
	follow := func(step string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			stale := 0
			for _, id := range ids {
				r, w := get(replica, id), get(writer, id)
				switch {
				case r["stale"] == true:
					stale++
				case !same(r, w):
					t.Fatalf("%s: node %d: replica %v presented as fresh, writer %v", step, id, r, w)
				}
			}
			if stale == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d answers still stale after 30 s", step, stale)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	follow("materialized")
	before := get(replica, ids[0])

	edges := fmt.Sprintf(`{"edges":[[%d,%d],[%d,%d],[%d,%d]]}`, ids[0], ids[1], ids[0], ids[2], ids[3], ids[0])
	if code, body := httpJSON(t, "POST", writer+"/v1/edges", edges); code != http.StatusOK {
		t.Fatalf("update on the writer: %d %v", code, body)
	}
	// The writer's answers are exact now (cold where the update reached);
	// the replica's must equal them or be flagged.
	for _, id := range ids {
		if r := get(replica, id); r["stale"] != true && !same(r, get(writer, id)) {
			t.Fatalf("after the update: node %d: replica %v presented as fresh", id, r)
		}
	}
	if code, body := httpJSON(t, "POST", writer+"/v1/refresh", ""); code != http.StatusOK {
		t.Fatalf("refresh on the writer: %d %v", code, body)
	}
	follow("refreshed")
	if after := get(replica, ids[0]); fmt.Sprint(after["probs"]) == fmt.Sprint(before["probs"]) {
		t.Errorf("node %d: the same answer before and after the update and refresh (%v): the test shows nothing", ids[0], after["probs"])
	}
	if code, body := httpJSON(t, "POST", replica+"/v1/refresh", ""); code != http.StatusForbidden {
		t.Errorf("refresh on the replica: %d %v, want 403", code, body)
	}
	cancelR()
	cancelW()
	for _, done := range []chan error{doneR, doneW} {
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

// Ensure that fasd serve --replica picks up the models of a fasd train and
// fasd materialize run while the writer's serve was stopped: until then
// every answer is the old models' and the old writer's, or flagged stale;
// after, without a restart, the answers are the new writer's, with its
// model version, in the predictions and in /healthz.
func TestServeReplica_NewModels(t *testing.T) {
	dir := fixtureStore(t, "views")
	ps := predictAll(t, dir)
	db := pgtest.CopyOf(t, dir)
	t.Setenv(tokenEnv, serveTestToken)
	writer, _, cancelW, doneW := startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0")
	replica, _, cancelR, doneR := startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0", "--replica", "--poll", "20ms")
	var ids []int64
	for _, p := range ps[:20] {
		ids = append(ids, p.ID)
	}
	get := func(base string, id int64) map[string]any { return getPrediction(t, base, id) }
	key := func(a map[string]any) string {
		return fmt.Sprint(a["model"], a["probs"], a["subgraphs"], a["graph_version"])
	}
	healthModel := func(base string) any {
		t.Helper()
		code, body := httpJSON(t, "GET", base+"/healthz", "")
		views, _ := body["views"].(map[string]any)
		if code != http.StatusOK || views == nil {
			t.Fatalf("%s/healthz: %d %v", base, code, body)
		}
		return views["model"]
	}
	old := map[int64]string{}
	for _, id := range ids {
		r, w := get(replica, id), get(writer, id)
		if r["stale"] == true || key(r) != key(w) {
			t.Fatalf("node %d: replica %v, writer %v", id, r, w)
		}
		old[id] = key(w)
	}
	oldModel := healthModel(writer)
	cancelW()
	if err := <-doneW; err != nil {
		t.Fatalf("writer's serve: %v", err)
	}
	// Answers before the switch: the old writer's, or flagged stale.
	check := func(step string) (stale, fresh int) {
		t.Helper()
		for _, id := range ids {
			switch r := get(replica, id); {
			case r["stale"] == true:
				stale++
			case key(r) != old[id]:
				t.Fatalf("%s: node %d: replica %v presented as fresh, the old writer answered %s", step, id, r, old[id])
			default:
				fresh++
			}
		}
		return stale, fresh
	}
	if _, err, code := run(t, append(append([]string{"train", "--db", db}, tinyTrain...), "--seed", "6")...); err != nil {
		t.Fatalf("train: exit %d: %v", code, err)
	}
	if stale, _ := check("trained"); stale != 0 {
		t.Fatalf("trained, views not rebuilt: %d answers stale, want the old views' answers", stale)
	}
	if _, err, code := run(t, "materialize", "--db", db); err != nil {
		t.Fatalf("materialize: exit %d: %v", code, err)
	}
	writer, _, cancelW, doneW = startServeCommand(t, "serve", "--db", db, "--addr", "127.0.0.1:0")
	newModel := healthModel(writer)
	if newModel == oldModel {
		t.Fatalf("the writer serves model %v before and after fasd train", newModel)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		stale := 0
		for _, id := range ids {
			r, w := get(replica, id), get(writer, id)
			switch {
			case r["stale"] == true:
				stale++
			case key(r) != key(w) && key(r) != old[id]:
				t.Fatalf("node %d: replica %v presented as fresh, writer %v, old writer %s", id, r, w, old[id])
			case key(r) == old[id] && key(r) != key(w):
				stale++ // the old views' answer, read before the materialize began (or the same as the new)
			}
		}
		if stale == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d answers still stale or old 30 s after the materialize", stale)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m := healthModel(replica); m != newModel {
		t.Errorf("replica's /healthz model %v, want the writer's %v", m, newModel)
	}
	cancelR()
	cancelW()
	for _, done := range []chan error{doneR, doneW} {
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

// getPrediction is GET base/v1/nodes/id/prediction, which must answer 200.
func getPrediction(t *testing.T, base string, id int64) map[string]any {
	t.Helper()
	code, body := httpJSON(t, "GET", fmt.Sprintf("%s/v1/nodes/%d/prediction", base, id), "")
	if code != http.StatusOK {
		t.Fatalf("%s prediction of %d: %d %v", base, id, code, body)
	}
	return body
}
