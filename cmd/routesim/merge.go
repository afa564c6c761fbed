package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/plots"
	"github.com/routesim/routesim/sweep"
)

// mergeCmd joins shard outputs into one sweep: routesim merge OUT DIR...
// Every shard is read and checked before anything is written: a missing
// or incomplete shard, a point that fails its check or a shard of another
// sweep leaves OUT untouched.
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
	if err := checkMergeDirs(out, dirs); err != nil {
		return err
	}
	sh, err := sweep.ReadShards(dirs)
	if err != nil {
		return err
	}
	lock, err := claimDir(out, "merge OUT", kindSweep)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := adoptSweepDir(out, sh.Manifest, sweep.Shard{}, false, false); err != nil {
		return err
	}
	if err := sh.WritePoints(out); err != nil {
		return err
	}
	cross, comp, err := writeSweepOutputs(out, sh.Manifest, sh.Results)
	if err != nil {
		return err
	}
	return printCrossovers(stdout, sh.Manifest, sh.Results, cross, comp, out)
}

// checkMergeDirs refuses a shard directory given twice, and OUT among
// them (merge writes into a new directory or a merged one).
func checkMergeDirs(out string, dirs []string) error {
	seen := map[string]string{canonicalPath(out): "OUT"}
	for _, d := range dirs {
		switch prev := seen[canonicalPath(d)]; prev {
		case "":
			seen[canonicalPath(d)] = d
		case "OUT":
			return usageError{fmt.Errorf("merge: OUT %s is also a shard directory; merge into a new directory", out)}
		default:
			return usageError{fmt.Errorf("merge: %s is given twice", d)}
		}
	}
	return nil
}

// writeSweepOutputs writes a sweep's tables (sweep.WriteOutputs) and its
// figures into dir from the results; the figures are drawn first, so a
// failure to draw them writes nothing. It returns the crossover tables.
func writeSweepOutputs(dir string, m *sweep.Manifest, results []sweep.Result) ([]sweep.Crossover, []sweep.Crossover, error) {
	metric, err := sweep.MetricByName(m.Metric, m.SLOTTFTMs)
	if err != nil {
		return nil, nil, err
	}
	figs, err := plots.All(results, m.Grid, metric, plotMeta(m.Meta))
	if err != nil {
		return nil, nil, err
	}
	cross, comp, err := sweep.WriteOutputs(dir, m, results)
	if err != nil {
		return nil, nil, err
	}
	return cross, comp, plots.Save(filepath.Join(dir, "plots"), figs)
}

// plotMeta is what a sweep's figures' titles name.
func plotMeta(m sweep.Meta) plots.Meta {
	return plots.Meta{Trace: m.Trace, GPU: m.GPU, Model: m.Model, ProfileKind: m.ProfileKind}
}
