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
	"github.com/routesim/routesim/sweep"
)

func jsonString(v any) (string, error) {
	var b bytes.Buffer
	err := writeJSON(&b, v)
	return b.String(), err
}

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
	sh, err := readShards(dirs)
	if err != nil {
		return err
	}
	lock, err := claimDir(out, "merge OUT", kindSweep)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := adoptSweepDir(out, sh.m, sweep.Shard{}, false, false); err != nil {
		return err
	}
	if err := writePoints(out, sh); err != nil {
		return err
	}
	cross, comp, err := writeSweepOutputs(out, sh.m, sh.results)
	if err != nil {
		return err
	}
	return printCrossovers(stdout, sh.m, sh.results, cross, comp, out)
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

// shardSet is every shard's points, read and checked, in grid order.
type shardSet struct {
	m       *sweepManifest
	results []sweep.Result
	files   [][]byte // each point's file, as read
}

// readShards reads every shard directory's manifest, shard record and
// point files and checks that together they are one whole sweep.
func readShards(dirs []string) (*shardSet, error) {
	var m *sweepManifest
	k := 0
	byShard := map[int]string{}
	for _, d := range dirs {
		dm, err := readManifest(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if m != nil && !sameSweep(m, dm) {
			return nil, fmt.Errorf("merge: %s is a different sweep from %s (%s)", d, dirs[0], manifestDiff(m, dm))
		}
		m = dm
		s, ok, err := readShard(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if !ok {
			continue
		}
		if k != 0 && s.K != k {
			return nil, fmt.Errorf("merge: %s is shard %d/%d, the others of a sweep split in %d", d, s.I, s.K, k)
		}
		if prev, dup := byShard[s.I]; dup {
			return nil, fmt.Errorf("merge: %s and %s are both shard %d/%d", prev, d, s.I, s.K)
		}
		k, byShard[s.I] = s.K, d
	}
	grid := m.Grid.Points()
	index := make(map[string]int, len(grid))
	for i, p := range grid {
		index[p.Key()+".json"] = i
	}
	digest := manifestDigest(m)
	sh := &shardSet{m: m, results: make([]sweep.Result, len(grid)), files: make([][]byte, len(grid))}
	from := make([]string, len(grid))
	for _, d := range dirs {
		entries, err := os.ReadDir(sweep.PointsDir(d))
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue // a temporary (atomicfile)
			}
			path := filepath.Join(sweep.PointsDir(d), e.Name())
			i, ok := index[e.Name()]
			if !ok {
				return nil, fmt.Errorf("merge: %s is not a point of this sweep", path)
			}
			r, b, err := sweep.ReadPointFile(path)
			if err == nil {
				err = r.Belongs(path, grid[i], digest)
			}
			if err != nil {
				return nil, fmt.Errorf("merge: %w", err)
			}
			if from[i] != "" && !bytes.Equal(sh.files[i], b) {
				return nil, fmt.Errorf("merge: %s and %s hold different results for one point (written by different routesim versions?)", from[i], path)
			}
			sh.results[i], sh.files[i], from[i] = *r, b, path
		}
	}
	return sh, missingShards(grid, from, k, byShard)
}

// missingShards says which shards lack points, if any do.
func missingShards(grid []sweep.Point, from []string, k int, byShard map[int]string) error {
	var missing []int
	for i := range grid {
		if from[i] == "" {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if k == 0 {
		return fmt.Errorf("merge: %d of the sweep's %d points are missing (first %s): give every shard's directory", len(missing), len(grid), grid[missing[0]].Key())
	}
	var parts []string
	per := map[int]int{}
	for _, i := range missing {
		per[i%k]++
	}
	for s := 0; s < k; s++ {
		n := per[s]
		switch {
		case n == 0:
		case byShard[s] == "":
			parts = append(parts, fmt.Sprintf("shard %d/%d is not among the directories given", s, k))
		default:
			parts = append(parts, fmt.Sprintf("shard %d/%d (%s) lacks %d of its points: resume it with its sweep command", s, k, byShard[s], n))
		}
	}
	return fmt.Errorf("merge: %d of the sweep's %d points are missing: %s", len(missing), len(grid), strings.Join(parts, "; "))
}

// writePoints publishes every point file into OUT at once.
func writePoints(out string, sh *shardSet) error {
	d, err := atomicfile.NewDir(sweep.PointsDir(out))
	if err != nil {
		return err
	}
	for i, b := range sh.files {
		w, err := d.Create(sh.results[i].Key + ".json")
		if err == nil {
			_, err = w.Write(b)
		}
		if err != nil {
			d.Abort()
			return fmt.Errorf("merge: %w", err)
		}
	}
	return d.Commit()
}
