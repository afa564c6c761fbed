package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/plots"
	"github.com/routesim/routesim/sweep"
)

// plotCmd redraws a sweep's plots from its outputs: routesim plot DIR.
func plotCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim plot", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	metric := fs.String("metric", "", "metric for the metric-vs-N plot (default: the sweep's): "+strings.Join(sweep.MetricNames, ", "))
	slo := fs.Float64("slo-ttft", 0, "TTFT SLO in ms for --metric goodput (default: the sweep's)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim plot DIR [flags]\n\nRedraw a sweep's plots (PNG and SVG) into DIR/plots from DIR/points and DIR/manifest.json.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{fmt.Errorf("plot: want one sweep directory")}
	}
	dir := fs.Arg(0)
	lock, err := claimDir(dir, "plot DIR", kindSweep)
	if err != nil {
		return err
	}
	defer lock.Release()
	m, err := sweep.ReadManifest(dir)
	if err != nil {
		return err
	}
	// The points belong to the sweep as its manifest records it: the
	// digest is taken before --metric or --slo-ttft choose what to draw.
	digest := m.Digest()
	met, err := plotMetric(m, *metric, *slo, fs.Changed("slo-ttft"))
	if err != nil {
		return usageError{err}
	}
	results, err := sweep.Load(dir, m.Grid.Points(), digest)
	if err != nil {
		return err
	}
	figs, err := plots.All(results, m.Grid, met, plotMeta(m.Meta))
	if err != nil {
		return err
	}
	if err := plots.Save(filepath.Join(dir, "plots"), figs); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %d plots (PNG and SVG) to %s/plots\n", len(figs), dir)
	return err
}

// plotMetric is the metric plot draws: name (default: the sweep's), with
// goodput's SLO from --slo-ttft (sloSet) or else the sweep's. Every metric
// is computed from the points' summaries and per-request TTFTs, which
// every point file holds, so any of them can be drawn from any sweep.
func plotMetric(m *sweep.Manifest, name string, slo float64, sloSet bool) (sweep.Metric, error) {
	if name == "" {
		name = m.Metric
	}
	if !slices.Contains(sweep.MetricNames, name) {
		return sweep.Metric{}, fmt.Errorf("plot --metric %q: unknown; the sweep's points hold %s (goodput with --slo-ttft MS)", name, strings.Join(sweep.MetricNames, ", "))
	}
	if !sloSet {
		slo = m.SLOTTFTMs
	}
	if !(slo >= 0) || math.IsInf(slo, 0) {
		return sweep.Metric{}, fmt.Errorf("plot --slo-ttft %g: want a TTFT in ms > 0", slo)
	}
	if name == "goodput" && slo == 0 {
		return sweep.Metric{}, fmt.Errorf("plot --metric goodput: this sweep ran without --slo-ttft; give one (--slo-ttft MS)")
	}
	return sweep.MetricByName(name, slo)
}
