package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// point builds a sweep result with the statistics the report reads.
func point(pol string, c int, p50, p90, rps, hit float64, host *sim.KVTiers) *sweep.Result {
	r := &sweep.Result{Point: sweep.Point{Policy: pol, Concurrency: c}}
	for i, p := range sim.Percentiles {
		switch p.Key {
		case "p50":
			r.Summary.TTFTMs.P[i] = p50
		case "p90":
			r.Summary.TTFTMs.P[i] = p90
		}
	}
	r.Summary.RequestsPerS, r.Summary.PrefixHitRate, r.Summary.Completeness = rps, hit, 1
	r.Summary.KVTiers = host
	return r
}

func TestAggregate(t *testing.T) {
	tier := func(h float64) *sim.KVTiers {
		return &sim.KVTiers{Tiers: []sim.TierSummary{{Medium: "CPU", HitRate: h}, {Medium: "DISK", HitRate: 0.9}}}
	}
	tests := []struct {
		name     string
		in       []*sweep.Result
		want     []row // only the fields checked below
		wantHost []float64
	}{
		{
			name: "means and range over seeds, round-robin first, then by concurrency",
			in: []*sweep.Result{
				point("kv", 32, 100, 300, 2, 0.6, nil),
				point("round-robin", 32, 200, 400, 1, 0.4, nil),
				point("kv", 32, 140, 500, 4, 0.8, nil),
				point("kv", 16, 50, 60, 1, 0.5, nil),
			},
			want: []row{
				{Policy: "kv", Concurrency: 16, Seeds: 1, TTFTP50: 50, TTFTP50Lo: 50, TTFTP50Hi: 50, TTFTP90: 60, ReqPerS: 1, HitRate: 0.5},
				{Policy: "round-robin", Concurrency: 32, Seeds: 1, TTFTP50: 200, TTFTP50Lo: 200, TTFTP50Hi: 200, TTFTP90: 400, ReqPerS: 1, HitRate: 0.4},
				{Policy: "kv", Concurrency: 32, Seeds: 2, TTFTP50: 120, TTFTP50Lo: 100, TTFTP50Hi: 140, TTFTP90: 400, ReqPerS: 3, HitRate: 0.7},
			},
			wantHost: []float64{math.NaN(), math.NaN(), math.NaN()},
		},
		{
			name:     "host-tier share (disk left out) only when every seed has a tier",
			in:       []*sweep.Result{point("kv", 8, 1, 1, 1, 0, tier(0.2)), point("kv", 8, 1, 1, 1, 0, tier(0.4)), point("round-robin", 8, 1, 1, 1, 0, tier(0.5)), point("round-robin", 8, 1, 1, 1, 0, nil)},
			want:     []row{{Policy: "round-robin", Concurrency: 8, Seeds: 2, TTFTP50: 1, TTFTP50Lo: 1, TTFTP50Hi: 1, TTFTP90: 1, ReqPerS: 1}, {Policy: "kv", Concurrency: 8, Seeds: 2, TTFTP50: 1, TTFTP50Lo: 1, TTFTP50Hi: 1, TTFTP90: 1, ReqPerS: 1}},
			wantHost: []float64{math.NaN(), 0.3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := aggregate("arm", tt.in)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d rows, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Arm != "arm" || g.Policy != w.Policy || g.Concurrency != w.Concurrency || g.Seeds != w.Seeds {
					t.Errorf("row %d: got %s %s c=%d seeds=%d, want arm %s c=%d seeds=%d", i, g.Arm, g.Policy, g.Concurrency, g.Seeds, w.Policy, w.Concurrency, w.Seeds)
				}
				for _, f := range []struct {
					name      string
					got, want float64
				}{{"p50", g.TTFTP50, w.TTFTP50}, {"p50 lo", g.TTFTP50Lo, w.TTFTP50Lo}, {"p50 hi", g.TTFTP50Hi, w.TTFTP50Hi}, {"p90", g.TTFTP90, w.TTFTP90}, {"req/s", g.ReqPerS, w.ReqPerS}, {"hit", g.HitRate, w.HitRate}, {"host", g.HostHitRate, tt.wantHost[i]}} {
					if !(math.Abs(f.got-f.want) < 1e-12 || math.IsNaN(f.got) && math.IsNaN(f.want)) {
						t.Errorf("row %d %s: got %v, want %v", i, f.name, f.got, f.want)
					}
				}
			}
		})
	}
}

func TestLogTicksLabelWhatTheyMark(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{90, 900, []string{"100", "200", "500"}},
		{90, 60000, []string{"100", "1000", "10000"}}, // wider than two decades: powers of ten only
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (logTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("Ticks(%v, %v) labels %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestRunRefusesAnEmptyArm: a directory without point files is an error
// naming it, not an empty table.
func TestRunRefusesAnEmptyArm(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cpu-64g")
	if err := os.MkdirAll(filepath.Join(dir, "points"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(&out, "", "chats", []string{dir})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("run on an empty arm: err %v, want one naming %s", err, dir)
	}
	if out.Len() != 0 {
		t.Errorf("run wrote %q before failing", out.String())
	}
}
