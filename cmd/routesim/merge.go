package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/plots"
	"github.com/routesim/routesim/sweep"
)

func jsonString(v any) (string, error) {
	var b bytes.Buffer
	err := writeJSON(&b, v)
	return b.String(), err
}

// writeShardManifest leaves the sweep's manifest (and, for a shard, its
// number) in an output directory: resume and merge check it.
func writeShardManifest(dir string, m *sweepManifest, s sweep.Shard) error {
	files := map[string]any{"manifest.json": m}
	if s.K > 1 {
		files["shard.json"] = s
	}
	for name, v := range files {
		if err := atomicfile.WriteFile(filepath.Join(dir, name), func(w io.Writer) error { return writeJSON(w, v) }); err != nil {
			return err
		}
	}
	return nil
}

// mergeCmd joins shard outputs into one sweep: routesim merge OUT DIR...
func mergeCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim merge", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim merge OUT SHARD_DIR...\n\nJoin the outputs of `routesim sweep --shard i/k` runs into one sweep in OUT (the same bytes as an unsharded run).\n")
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usageError{fmt.Errorf("merge: want OUT and at least one shard directory")}
	}
	out, dirs := fs.Arg(0), fs.Args()[1:]
	var m *sweepManifest
	for _, d := range dirs {
		dm, err := readManifest(d)
		if err != nil {
			return err
		}
		if m != nil && !sameSweep(m, dm) {
			return fmt.Errorf("merge: %s is a different sweep from %s", d, dirs[0])
		}
		m = dm
	}
	lock, err := atomicfile.LockDir(out)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := os.MkdirAll(sweep.PointsDir(out), 0o755); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, d := range dirs {
		entries, err := os.ReadDir(sweep.PointsDir(d))
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(sweep.PointsDir(d), e.Name()))
			if err != nil {
				return err
			}
			if err := atomicfile.WriteFile(filepath.Join(sweep.PointsDir(out), e.Name()), func(w io.Writer) error {
				_, err := w.Write(b)
				return err
			}); err != nil {
				return err
			}
		}
	}
	results, err := sweep.Load(out, m.Grid.Points(), manifestDigest(m))
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	cross, comp, err := writeSweepOutputs(out, m, results)
	if err != nil {
		return err
	}
	return printCrossovers(stdout, m, results, cross, comp, out)
}

// plotCmd redraws a sweep's plots from its outputs: routesim plot DIR.
func plotCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim plot", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	metric := fs.String("metric", "", "metric for the metric-vs-N plot (default: the sweep's)")
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
	m, err := readManifest(dir)
	if err != nil {
		return err
	}
	if *metric != "" {
		m.Metric = *metric
	}
	met, err := sweep.MetricByName(m.Metric, m.SLOTTFTMs)
	if err != nil {
		return usageError{err}
	}
	results, err := sweep.Load(dir, m.Grid.Points(), manifestDigest(m))
	if err != nil {
		return err
	}
	figs, err := plots.All(results, m.Grid, met, m.Meta)
	if err != nil {
		return err
	}
	if err := plots.Save(filepath.Join(dir, "plots"), figs); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %d plots (PNG and SVG) to %s/plots\n", len(figs), dir)
	return err
}
