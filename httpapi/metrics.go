// GET /metrics: the Prometheus text exposition, written by hand.

package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// metrics writes the Prometheus text exposition format.
func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"method not allowed"})
		return
	}
	var b strings.Builder
	metric := func(name, kind, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
	}
	metric("fasd_http_requests_total", "counter", "HTTP requests by route and status code.")
	names := append([]string(nil), s.names...)
	sort.Strings(names)
	for _, n := range names {
		byCode := s.routes[n].byCode()
		codes := make([]int, 0, len(byCode))
		for c := range byCode {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		for _, c := range codes {
			fmt.Fprintf(&b, "fasd_http_requests_total{route=%q,code=\"%d\"} %d\n", n, c, byCode[c])
		}
	}
	metric("fasd_http_request_duration_seconds", "summary", "Time spent serving requests, by route.")
	for _, n := range names {
		rs := s.routes[n]
		fmt.Fprintf(&b, "fasd_http_request_duration_seconds_sum{route=%q} %g\n", n, time.Duration(rs.nanos.Load()).Seconds())
		fmt.Fprintf(&b, "fasd_http_request_duration_seconds_count{route=%q} %d\n", n, rs.count.Load())
	}
	metric("fasd_http_rejected_total", "counter", "Requests refused before any route, by reason.")
	for _, c := range []struct {
		reason string
		n      *atomic.Int64
	}{{"auth", &s.rej.auth}, {"content_type", &s.rej.contentType}, {"host", &s.rej.host}, {"read_only", &s.rej.readOnly}} {
		fmt.Fprintf(&b, "fasd_http_rejected_total{reason=%q} %d\n", c.reason, c.n.Load())
	}
	metric("fasd_http_requests_in_flight", "gauge", "Requests being served.")
	fmt.Fprintf(&b, "fasd_http_requests_in_flight %d\n", s.inflt.Load())
	metric("fasd_predictions_total", "counter", "Predictions served, by source.")
	st := s.e.Counters()
	fmt.Fprintf(&b, "fasd_predictions_total{source=\"view\"} %d\n", st.PredictionsView)
	fmt.Fprintf(&b, "fasd_predictions_total{source=\"cold\"} %d\n", st.PredictionsCold)
	fmt.Fprintf(&b, "fasd_predictions_total{source=\"approx\"} %d\n", st.PredictionsApprox)
	metric("fasd_subgraphs_computed_total", "counter", "Subgraphs sampled, debiased and classified.")
	fmt.Fprintf(&b, "fasd_subgraphs_computed_total %d\n", st.SubgraphsComputed)
	metric("fasd_subgraph_cache_requests_total", "counter", "Debiased-subgraph requests, by cache result.")
	fmt.Fprintf(&b, "fasd_subgraph_cache_requests_total{result=\"hit\"} %d\n", st.SubgraphCacheHits)
	fmt.Fprintf(&b, "fasd_subgraph_cache_requests_total{result=\"miss\"} %d\n", st.SubgraphCacheMisses)
	metric("fasd_subgraph_cache_entries", "gauge", "Debiased subgraphs in the in-memory cache.")
	fmt.Fprintf(&b, "fasd_subgraph_cache_entries %d\n", st.SubgraphCacheEntries)
	metric("fasd_subgraph_cache_bytes", "gauge", "Bytes of the cached debiased subgraphs.")
	fmt.Fprintf(&b, "fasd_subgraph_cache_bytes %d\n", st.SubgraphCacheBytes)
	metric("fasd_updates_total", "counter", "Graph updates applied.")
	fmt.Fprintf(&b, "fasd_updates_total %d\n", st.Updates)
	metric("fasd_refreshes_total", "counter", "Refreshes and materializations run.")
	fmt.Fprintf(&b, "fasd_refreshes_total %d\n", st.Refreshes)
	metric("fasd_storage_background_problems_total", "counter", "Background errors and warnings reported by the storage engine.")
	fmt.Fprintf(&b, "fasd_storage_background_problems_total{level=\"error\"} %d\n", st.StorageErrors)
	fmt.Fprintf(&b, "fasd_storage_background_problems_total{level=\"warning\"} %d\n", st.StorageWarnings)
	if vs, err := s.e.Status(); err == nil {
		metric("fasd_graph_version", "gauge", "Current graph version.")
		fmt.Fprintf(&b, "fasd_graph_version %d\n", vs.GraphVersion)
		metric("fasd_views_complete", "gauge", "1 when every root has a view.")
		c := 0
		if vs.Complete {
			c = 1
		}
		fmt.Fprintf(&b, "fasd_views_complete %d\n", c)
		metric("fasd_view_roots", "gauge", "Subgraphs with a stored record.")
		fmt.Fprintf(&b, "fasd_view_roots %d\n", vs.Roots)
		metric("fasd_dirty_roots", "gauge", "Subgraphs waiting for a refresh.")
		fmt.Fprintf(&b, "fasd_dirty_roots %d\n", vs.DirtyRoots)
		metric("fasd_stale_nodes", "gauge", "Nodes whose view may be out of date.")
		fmt.Fprintf(&b, "fasd_stale_nodes %d\n", vs.StaleNodes)
	}
	metric("fasd_uptime_seconds", "gauge", "Seconds since the handler was built.")
	fmt.Fprintf(&b, "fasd_uptime_seconds %g\n", time.Since(s.start).Seconds())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}
