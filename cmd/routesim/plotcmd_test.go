package main

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/sweep"
)

// TestPlotEveryMetric: plot --metric redraws metric-vs-n for every metric
// the sweep's points hold, not only the sweep's own (the manifest digest
// the points carry is the sweep's, whatever the plot draws); goodput takes
// its SLO from --slo-ttft. An unknown metric is refused with the list.
func TestPlotEveryMetric(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	sweepTo(t, dir)
	for _, name := range sweep.MetricNames {
		t.Run(name, func(t *testing.T) {
			args := []string{"plot", dir, "--metric", name}
			slo := 0.0
			if name == "goodput" {
				args, slo = append(args, "--slo-ttft", "800"), 800
			}
			if _, stderr, err := runCLI(args...); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			m, err := sweep.MetricByName(name, slo)
			if err != nil {
				t.Fatal(err)
			}
			svg, err := os.ReadFile(filepath.Join(dir, "plots", "metric-vs-n.svg"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(html.UnescapeString(string(svg)), m.Label) {
				t.Errorf("metric-vs-n.svg does not name %q", m.Label)
			}
		})
	}
	_, stderr, err := runCLI("plot", dir, "--metric", "ttft-p42")
	if err == nil || !strings.Contains(stderr+err.Error(), "ttft-offered-p50, completeness, goodput") {
		t.Errorf("unknown metric: %v %s; want an error listing the metrics", err, stderr)
	}
	if _, stderr, err := runCLI("plot", dir, "--metric", "goodput"); err == nil || !strings.Contains(stderr+err.Error(), "--slo-ttft") {
		t.Errorf("goodput without an SLO: %v %s; want an error asking for --slo-ttft", err, stderr)
	}
}
