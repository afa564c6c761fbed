package sweep

import (
	"strings"
	"testing"

	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"2..16", []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{"2..16:2", []int{2, 4, 6, 8, 10, 12, 14, 16}},
		{"2,4,8", []int{2, 4, 8}},
		{"1,2..8:3", []int{1, 2, 5, 8}},
		{"4", []int{4}},
		{"1..10:9223372036854775807", []int{1}}, // a step past the top of int
		{"3..3:5", []int{3}},
	} {
		got, err := ParseRange(tc.in, 4096)
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v, %v", tc.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
				break
			}
		}
	}
	// The last two once expanded before any check: 2^31 values filled
	// memory, and a step past the top of int wrapped and never ended.
	for _, bad := range []string{"16..2", "0..4", "", "a..b", "2..8:0", "4,2", "-1", "2..x", "4097", "2..5000",
		"1..2147483648", "1..9223372036854775807:2"} {
		if _, err := ParseRange(bad, 4096); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ParseRange("2..5000", 4096); err == nil || !strings.Contains(err.Error(), "[1, 4096]") {
		t.Errorf("error %v does not name the bound", err)
	}
}

func TestGridOrderAndShards(t *testing.T) {
	g := Grid{Ns: []int{2, 4}, Policies: []string{"a", "b"}, Seeds: 2, BaseSeed: 7, RateScales: []float64{1}}
	pts := g.Points()
	if len(pts) != 8 || pts[0] != (Point{N: 2, Policy: "a", Seed: 7, RateScale: 1}) || pts[1] != (Point{N: 2, Policy: "a", Seed: 8, RateScale: 1}) || pts[7] != (Point{N: 4, Policy: "b", Seed: 8, RateScale: 1}) {
		t.Fatalf("points %v", pts)
	}
	seen := map[int]int{}
	for k := 0; k < 3; k++ {
		s := Shard{k, 3}
		for i := range pts {
			if s.Has(i) {
				seen[i]++
			}
		}
	}
	for i := range pts {
		if seen[i] != 1 {
			t.Errorf("point %d is in %d shards", i, seen[i])
		}
	}
	for _, bad := range []string{"3/3", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("shard %q accepted", bad)
		}
	}
}

// synthetic builds results where metric values per (policy, N) are the
// given per-seed series.
func synthetic(ns []int, series map[string][][]float64) ([]Result, Grid) {
	g := Grid{Ns: ns, Seeds: len(series["a"][0]), RateScales: []float64{1}, Policies: []string{"a", "b"}}
	var rs []Result
	for _, pol := range g.Policies {
		for ni, n := range ns {
			for s, v := range series[pol][ni] {
				d := sim.NewDist([]float64{v})
				rs = append(rs, Result{Point: Point{N: n, Policy: pol, Seed: uint64(s), RateScale: 1}, Summary: sim.Summary{TTFTMs: d, Completeness: 1}})
			}
		}
	}
	return rs, g
}

func TestCrossoverSynthetic(t *testing.T) {
	m, _ := MetricByName("ttft-p50", 0)
	ns := []int{2, 4, 8, 16}
	clear, g := synthetic(ns, map[string][][]float64{
		"a": {{100, 101, 99}, {200, 201, 199}, {300, 301, 299}, {400, 401, 399}},
		"b": {{500, 501, 499}, {300, 301, 299}, {150, 151, 149}, {100, 101, 99}},
	})
	c := Crossovers(clear, g, m, 500, 1)[0]
	if c.BetterFirst != "a" || c.FlipN != 8 || c.CILow != 8 || c.CIHigh != 8 || c.NoFlipShare != 0 {
		t.Errorf("clear flip: %+v", c)
	}
	if !strings.Contains(c.String(), "a better up to N=4, b from N=8") {
		t.Errorf("table line %q", c.String())
	}
	none, g := synthetic(ns, map[string][][]float64{
		"a": {{1, 1}, {2, 2}, {3, 3}, {4, 4}},
		"b": {{5, 5}, {6, 6}, {7, 7}, {8, 8}},
	})
	c = Crossovers(none, g, m, 200, 1)[0]
	if c.FlipN != 0 || c.NoFlipShare != 1 || !strings.Contains(c.String(), "no crossover") {
		t.Errorf("no flip: %+v %s", c, c)
	}
	// Paired seeds: two policies that behave identically never "flip".
	same, g2 := synthetic(ns, map[string][][]float64{
		"a": {{1, 9}, {2, 8}, {3, 7}, {4, 6}},
		"b": {{1, 9}, {2, 8}, {3, 7}, {4, 6}},
	})
	if c := Crossovers(same, g2, m, 200, 1)[0]; c.FlipN != 0 || c.NoFlipShare != 1 || c.BetterFirst != "" {
		t.Errorf("identical policies: %+v", c)
	}
	// Noisy: the means flip at N=8, but the per-seed differences change
	// sign at N=4 and 8 (seeds are paired across policies): those points
	// are ties within the seeds' noise, the flip is where b is clearly
	// better (N=16), and the interval spans the uncertain region.
	noisy, g := synthetic(ns, map[string][][]float64{
		"a": {{100, 100, 100, 100}, {200, 200, 200, 200}, {300, 300, 300, 300}, {400, 400, 400, 400}},
		"b": {{300, 300, 300, 300}, {150, 350, 120, 300}, {250, 380, 200, 330}, {100, 100, 100, 100}},
	})
	c = Crossovers(noisy, g, m, 2000, 3)[0]
	if c.FlipN != 16 || !strings.Contains(c.String(), "a better up to N=2, tied at N=4–8, b from N=16") {
		t.Errorf("noisy: flip at %d, want 16 (means %v / %v): %s", c.FlipN, c.MeanA, c.MeanB, c)
	}
	if c.CILow > 4 || c.CIHigh < 16 || c.CILow == c.CIHigh {
		t.Errorf("noisy: CI %d–%d should span the uncertain region", c.CILow, c.CIHigh)
	}
	// Identical from N=4 on (kv routers without rejections): a tie, not
	// "better everywhere in range".
	tail, g := synthetic(ns, map[string][][]float64{
		"a": {{10, 11, 12, 10, 11}, {5, 6, 7, 5, 6}, {3, 3, 4, 3, 3}, {2, 2, 2, 2, 2}},
		"b": {{90, 91, 92, 90, 91}, {5, 6, 7, 5, 6}, {3, 3, 4, 3, 3}, {2, 2, 2, 2, 2}},
	})
	c = Crossovers(tail, g, m, 200, 1)[0]
	if want := "a better up to N=2, tied from N=4: no crossover"; !strings.Contains(c.String(), want) || c.FlipN != 0 {
		t.Errorf("tied tail: %q, want %q", c, want)
	}
	// Means that differ by less than the seeds' noise are tied.
	noise, g := synthetic(ns[:1], map[string][][]float64{
		"a": {{100, 140, 60, 120, 80}},
		"b": {{101, 139, 62, 119, 82}},
	})
	if c := Crossovers(noise, g, m, 200, 1)[0]; c.BetterFirst != "" || !strings.Contains(c.String(), "tied everywhere") {
		t.Errorf("within noise: %s (verdicts %v)", c, c.Verdicts)
	}
	hb, _ := MetricByName("completeness", 0)
	if !hb.HigherBetter {
		t.Error("completeness must rank higher as better")
	}
	if _, err := MetricByName("goodput", 0); err == nil {
		t.Error("goodput without an SLO accepted")
	}
}

func TestSliceSkipsSpreadWindows(t *testing.T) {
	base := scenario.Defaults()
	base.Trace, base.MaxISL, base.First = "arxiv-window", 16384, 1000
	skips, err := SliceSkips(base, 3)
	if err != nil {
		t.Fatal(err)
	}
	// 1,461 requests ≤ 16,384 tokens in the window: 461 to spread over.
	if len(skips) != 3 || skips[0] != 0 || skips[1] != 230 || skips[2] != 461 {
		t.Errorf("skips %v, want [0 230 461]", skips)
	}
	base.First = 0
	if _, err := SliceSkips(base, 3); err == nil {
		t.Error("--slices without --first accepted")
	}
	base.First = 5000
	if _, err := SliceSkips(base, 3); err == nil {
		t.Error("a window longer than the trace accepted")
	}
}

// FuzzParseRange: any input is refused or gives increasing values in
// [1, max], quickly (a range is bounded before it is expanded).
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"2..16", "2..16:2", "1,2..8:3", "1..2147483648", "1..10:9223372036854775807", "0", "4,2", ""} {
		f.Add(s, 4096)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 1 || max > 1_000_000 {
			return
		}
		got, err := ParseRange(s, max)
		if err != nil {
			return
		}
		if len(got) == 0 || len(got) > max {
			t.Fatalf("%q: %d values for max %d", s, len(got), max)
		}
		for i, v := range got {
			if v < 1 || v > max || i > 0 && v <= got[i-1] {
				t.Fatalf("%q: values %v (max %d)", s, got, max)
			}
		}
	})
}

// TestCrossoverIdenticalSeeds: seeds that vary nothing (a noiseless replay)
// give no interval, and the line says why; one seed that differs restores
// the bootstrap.
func TestCrossoverIdenticalSeeds(t *testing.T) {
	m, _ := MetricByName("ttft-p50", 0)
	ns := []int{2, 4, 8}
	rs, g := synthetic(ns, map[string][][]float64{
		"a": {{100, 100, 100, 100, 100}, {200, 200, 200, 200, 200}, {300, 300, 300, 300, 300}},
		"b": {{500, 500, 500, 500, 500}, {150, 150, 150, 150, 150}, {100, 100, 100, 100, 100}},
	})
	if !SeedsIdentical(rs, g, m) {
		t.Fatal("SeedsIdentical = false for identical seeds")
	}
	c := Crossovers(rs, g, m, 500, 1)[0]
	if !c.SeedsIdentical || c.FlipN != 4 {
		t.Fatalf("crossover %+v", c)
	}
	line := c.String()
	if !strings.Contains(line, "all 5 seeds identical: no interval") || strings.Contains(line, "CI") {
		t.Errorf("line %q shows an interval over identical seeds", line)
	}
	rs[1].Summary.TTFTMs = sim.NewDist([]float64{101}) // policy a, N = 2, second seed
	if SeedsIdentical(rs, g, m) {
		t.Error("SeedsIdentical = true with one seed that differs")
	}
	if c := Crossovers(rs, g, m, 500, 1)[0]; c.SeedsIdentical || !strings.Contains(c.String(), "CI") {
		t.Errorf("varying seeds: %+v %s", c, c)
	}
	// Coefficient draws vary even where seeds do not.
	rs[1].Summary.TTFTMs = sim.NewDist([]float64{100})
	for i := range rs {
		rs[i].Draws = []sim.Summary{rs[i].Summary}
	}
	if SeedsIdentical(rs, g, m) {
		t.Error("SeedsIdentical = true with coefficient draws")
	}
}

// TestPrepareChecksEveryClusterSize: a sweep's grid varies N past the
// base's, so Prepare checks each policy at the largest N: a prefix-hash
// ring too large for 4,096 workers is refused before any point runs.
func TestPrepareChecksEveryClusterSize(t *testing.T) {
	base := scenario.Defaults()
	base.Trace, base.First, base.N, base.Policies.Replication = "conversation", 20, 2, 1<<16
	r := &Runner{Base: base, Grid: Grid{Ns: []int{2, 4096}, Policies: []string{"round-robin", "prefix-hash"}, Seeds: 1, RateScales: []float64{1}},
		Dir: t.TempDir()}
	err := r.Prepare()
	if err == nil || !strings.Contains(err.Error(), "× 4096 workers") {
		t.Fatalf("error %v, want the ring too large at 4,096 workers", err)
	}
	r = &Runner{Base: base, Grid: Grid{Ns: []int{2, 8}, Policies: []string{"prefix-hash"}, Seeds: 1, RateScales: []float64{1}}, Dir: t.TempDir()}
	if err := r.Prepare(); err != nil {
		t.Errorf("up to 8 workers: %v", err)
	}
}
