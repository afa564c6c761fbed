package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/sealed"
	"github.com/routesim/routesim/scenario"
)

// testPoint runs one small point (60 trace requests on 2 workers) into a
// temporary sweep directory and returns its runner, point and file.
func testPoint(t testing.TB) (*Runner, Point, string) {
	t.Helper()
	base := scenario.Defaults()
	base.Trace, base.N = "../testdata/traces/arxiv_head60.jsonl", 2
	r := &Runner{Base: base, Grid: Grid{Ns: []int{2}, Policies: []string{"round-robin"}, Seeds: 1, RateScales: []float64{1}},
		Dir: t.TempDir(), Jobs: 1, Digest: "d1"}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := r.Grid.Points()[0]
	return r, p, filepath.Join(PointsDir(r.Dir), p.Key()+".json")
}

// edit decodes a point file's JSON, lets change alter it, and encodes it
// again: with its old digest (reseal false) or a recomputed one, as a
// tool rewriting the file would (the structural checks must then catch
// what the digest no longer can).
func edit(t testing.TB, file []byte, reseal bool, change func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(file))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	change(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !reseal {
		return b
	}
	delete(m, sealed.Field)
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out, err := sealed.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	// Keep members the Result encoding adds back out when the case removed
	// them: re-decode the resealed file and drop them again, keeping the
	// digest (so only the presence checks can object).
	var back map[string]any
	d2 := json.NewDecoder(bytes.NewReader(out))
	d2.UseNumber()
	d2.Decode(&back)
	for k := range back {
		if _, ok := m[k]; !ok && k != sealed.Field {
			delete(back, k)
		}
	}
	out, _ = json.Marshal(back)
	return out
}

func summaryOf(m map[string]any) map[string]any { return m["summary"].(map[string]any) }

// TestPointFilesAreVerified: a point file is used only if its content is
// what routesim wrote (digest) and holds together (summary present, the
// per-request arrays as long as the requests offered, finite values, the
// TTFT distribution matching the TTFTs). Each bad file is an error naming
// it and the field.
func TestPointFilesAreVerified(t *testing.T) {
	r, p, path := testPoint(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPoint(good, path); err != nil {
		t.Fatalf("the file as written: %v", err)
	}
	cases := []struct {
		name   string
		body   []byte
		reseal bool
		want   string
	}{
		{"p50 edited to 1.0", edit(t, good, false, func(m map[string]any) { summaryOf(m)["ttft_ms"].(map[string]any)["p50"] = 1.0 }), false, "content_digest"},
		{"p50 edited to 1.0, digest recomputed", edit(t, good, true, func(m map[string]any) { summaryOf(m)["ttft_ms"].(map[string]any)["p50"] = 1.0 }), true, "summary.ttft_ms"},
		{"p50 edited to -5, digest recomputed", edit(t, good, true, func(m map[string]any) { summaryOf(m)["ttft_ms"].(map[string]any)["p50"] = -5 }), true, "summary.ttft_ms.p50"},
		{"summary dropped", edit(t, good, false, func(m map[string]any) { delete(m, "summary") }), false, "content_digest"},
		{"summary dropped, digest recomputed", edit(t, good, true, func(m map[string]any) { delete(m, "summary") }), true, "summary: missing"},
		{"ttft_ms null", edit(t, good, true, func(m map[string]any) { m["ttft_ms"] = nil }), true, "ttft_ms: missing"},
		{"ttft_ms missing", edit(t, good, true, func(m map[string]any) { delete(m, "ttft_ms") }), true, "ttft_ms: missing"},
		{"ttft_ms shorter than arrival_s", edit(t, good, true, func(m map[string]any) { v := m["ttft_ms"].([]any); m["ttft_ms"] = v[:len(v)-1] }), true, "ttft_ms: 59 values"},
		{"arrival_s shorter", edit(t, good, true, func(m map[string]any) { v := m["arrival_s"].([]any); m["arrival_s"] = v[:10] }), true, "arrival_s: 10 values"},
		{"negative arrival", edit(t, good, true, func(m map[string]any) { m["arrival_s"].([]any)[3] = -1 }), true, "arrival_s[3]"},
		{"a TTFT of -7", edit(t, good, true, func(m map[string]any) { m["ttft_ms"].([]any)[0] = -7 }), true, "ttft_ms[0]"},
		{"offered edited", edit(t, good, true, func(m map[string]any) { summaryOf(m)["offered"] = 61 }), true, "summary.offered"},
		{"completeness edited", edit(t, good, true, func(m map[string]any) { summaryOf(m)["completeness"] = 1 }), true, "summary.completeness"},
		{"negative throughput", edit(t, good, true, func(m map[string]any) { summaryOf(m)["requests_per_s"] = -1 }), true, "summary.requests_per_s"},
		{"key of another point", edit(t, good, true, func(m map[string]any) { m["key"] = "rate=1.n=004.policy=round-robin.seed=0" }), true, "key"},
		{"no digest (an older routesim's)", edit(t, good, false, func(m map[string]any) { delete(m, sealed.Field) }), false, "no content_digest"},
		{"truncated", good[:len(good)/2], false, "not valid JSON"},
		{"empty", nil, false, "not valid JSON"},
	}
	for _, c := range cases {
		_, err := ReadPoint(c.body, path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v\nwant an error naming %s and %q", c.name, err, path, c.want)
		}
	}
	// Resuming over a bad point fails naming it (the digest's message and
	// the way out); with RecomputeBad it is rerun, with a notice.
	os.WriteFile(path, cases[0].body, 0o644)
	if _, err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("resume over an edited point: %v", err)
	}
	r.BadPointHint = "rerun with --recompute-bad"
	if _, err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--recompute-bad") {
		t.Errorf("resume over an edited point: %v, want the command's hint", err)
	}
	var notices []string
	r.RecomputeBad, r.Notice = true, func(s string) { notices = append(notices, s) }
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], path) || !strings.Contains(notices[0], "content_digest") {
		t.Errorf("notices %q, want one naming %s and why", notices, path)
	}
	again, _ := os.ReadFile(path)
	if !bytes.Equal(again, good) || res[0].Point != p {
		t.Error("the recomputed point differs from the original")
	}
}
