package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sweep"
)

// TestOutputsDocNamesEveryColumn: docs/outputs.md documents every
// per-request column, every point coordinate and every summary column
// (a percentile family as `ttft_ms_*`, bands as `<statistic>_band_lo`).
func TestOutputsDocNamesEveryColumn(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "outputs.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	has := func(name string) bool { return strings.Contains(doc, "`"+name+"`") }
	for _, c := range report.RequestSchema {
		if !has(c.Name) {
			t.Errorf("per-request column %s is not in docs/outputs.md", c.Name)
		}
	}
	for _, a := range sweep.AxisNames() {
		if !has(a) {
			t.Errorf("point column %s is not in docs/outputs.md", a)
		}
	}
	s := sim.Summary{Uncertainty: &sim.Bands{}, KVTiers: &sim.KVTiers{Tiers: []sim.TierSummary{{Medium: "CPU"}, {Medium: "CPU_PINNED"}, {Medium: "DISK"}}}}
	for _, f := range report.SummaryFields(&s) {
		name := f.Name
		if base, ok := strings.CutSuffix(name, "_band_lo"); ok {
			name = base
		} else if base, ok := strings.CutSuffix(name, "_band_hi"); ok {
			name = base
		}
		if has(name) {
			continue
		}
		if i := strings.LastIndex(name, "_"); i > 0 && has(name[:i]+"_*") && has(name[i+1:]) {
			continue
		}
		t.Errorf("summary column %s is not in docs/outputs.md", f.Name)
	}
}
