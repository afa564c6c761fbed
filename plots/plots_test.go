package plots

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/cmpimg"

	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

var update = flag.Bool("update", false, "rewrite the golden plots in testdata/golden/plots")

// fixture is a small synthetic sweep: round-robin keeps everything and
// slows at small N; kv-admission sheds load there and stays fast.
func fixture() ([]sweep.Result, sweep.Grid) {
	g := sweep.Grid{Ns: []int{2, 4, 8}, Policies: []string{"round-robin", "kv-admission"}, Seeds: 2, RateScales: []float64{1}}
	var rs []sweep.Result
	for _, p := range g.Points() {
		scale := 8.0 / float64(p.N)
		comp := 1.0
		if p.Policy == "kv-admission" {
			comp = 1 - 0.3*scale/4
			scale = 0.5 + 0.1*scale
		}
		var arr, ttft []float64
		for i := 0; i < 100; i++ {
			arr = append(arr, float64(i))
			t := (100 + float64(i)*scale*3) * (1 + 0.05*float64(p.Seed))
			if float64(i)/100 >= comp {
				t = -1
			}
			ttft = append(ttft, t)
		}
		var done []float64
		for _, t := range ttft {
			if t > 0 {
				done = append(done, t)
			}
		}
		s := sim.Summary{Completeness: comp, TTFTMs: sim.NewDist(done)}
		for w := 0; w < p.N; w++ {
			s.GPU.GPUs = append(s.GPU.GPUs, sim.GPUSummary{UtilMean: 0.4 + 0.05*float64(w%3)})
		}
		s.GPU.UtilMean = 0.45
		rs = append(rs, sweep.Result{Point: p, Summary: s, ArrivalS: arr, TTFTMs: ttft})
	}
	return rs, g
}

func TestGoldenPlots(t *testing.T) {
	rs, g := fixture()
	m, _ := sweep.MetricByName("ttft-p50", 0)
	figs, err := All(rs, g, m, Meta{Trace: "fixture", GPU: "GPU", Model: "Model", ProfileKind: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 8 {
		t.Fatalf("%d figures, want 4 + 2 per policy", len(figs))
	}
	for _, f := range figs {
		var buf bytes.Buffer
		if err := f.Render(&buf, "png"); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "testdata", "golden", "plots", f.Name+"_golden.png")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./plots -update)", err)
		}
		if ok, err := cmpimg.Equal("png", buf.Bytes(), want); err != nil || !ok {
			t.Errorf("%s differs from its golden image (%v); if intended, run go test ./plots -update and look at the new one", f.Name, err)
		}
	}
}

// TestIdenticalSeedsNoInterval: a sweep whose seeds all gave the same
// results (a noiseless replay) says so in its titles instead of showing
// intervals and bands over seeds; seeds that differ keep them.
func TestIdenticalSeedsNoInterval(t *testing.T) {
	rs, g := fixture() // seed 1 is 5 % slower than seed 0
	m, _ := sweep.MetricByName("ttft-p50", 0)
	titles := func(rs []sweep.Result) map[string]string {
		out := map[string]string{}
		figs, err := All(rs, g, m, Meta{Trace: "fixture", GPU: "GPU", Model: "Model", ProfileKind: "test"})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range figs {
			out[f.Name] = f.title()
		}
		return out
	}
	varying := titles(rs)
	for i := range rs {
		if rs[i].Point.Seed == 1 {
			prev := rs[i-1] // the same point's seed 0 (g.Points: seeds innermost)
			rs[i].Summary, rs[i].TTFTMs = prev.Summary, prev.TTFTMs
		}
	}
	same := titles(rs)
	for name, title := range same {
		if varying[name] == title && strings.Contains(title, "seeds") && !strings.Contains(title, "each of") {
			t.Errorf("%s: title unchanged with identical seeds: %q", name, title)
		}
		if strings.Contains(title, "interval") && !strings.Contains(title, "no interval") || strings.Contains(title, "band: their range") {
			t.Errorf("%s: identical seeds, yet the title promises an interval: %q", name, title)
		}
	}
	for name, title := range varying {
		if strings.Contains(title, "identical") {
			t.Errorf("%s: seeds differ, yet the title says identical: %q", name, title)
		}
	}
}

// title is a figure's title: its plot's, or a stacked figure's.
func (f Figure) title() string {
	if f.Plot != nil {
		return f.Plot.Title.Text
	}
	return f.Title
}
