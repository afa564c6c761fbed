package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/sweep"
)

// tinyPlan is a plan of 60 trace requests on 1..2 workers.
func tinyPlan(out string) []string {
	return []string{"plan", "--trace", smallTrace, "--skip", "0", "--n", "1..2", "--seeds", "1", "--policy", "round-robin",
		"--slo-ttft-p95", "100000", "--quiet", "--out", out}
}

// TestOneOwnerPerDirectory: a directory belongs to the run, sweep or plan
// that first wrote it; no other kind of command writes into it (its files
// stay byte for byte), and none writes while another holds its lock.
func TestOneOwnerPerDirectory(t *testing.T) {
	root := t.TempDir()
	dirs := map[string]string{"run": filepath.Join(root, "run"), "sweep": filepath.Join(root, "sweep"), "plan": filepath.Join(root, "plan")}
	writers := map[string][]string{
		"run":   {"run", "--trace", smallTrace, "--n", "2", "--out", dirs["run"]},
		"sweep": tinySweep(dirs["sweep"]),
		"plan":  tinyPlan(dirs["plan"]),
	}
	for _, k := range []string{"run", "sweep", "plan"} {
		if _, _, err := runCLI(writers[k]...); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	snapshot := func() map[string][]byte {
		files := map[string][]byte{}
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				files[p] = read(t, p)
			}
			return nil
		})
		return files
	}
	before := snapshot()
	for owner, dir := range dirs {
		for _, k := range []string{"run", "sweep", "plan", "merge"} {
			if k == owner {
				continue
			}
			var args []string
			switch k {
			case "run":
				args = []string{"run", "--trace", smallTrace, "--n", "2", "--out", dir}
			case "sweep":
				args = tinySweep(dir)
			case "plan":
				args = tinyPlan(dir)
			case "merge":
				if owner == "sweep" {
					continue
				}
				args = []string{"merge", dir, dirs["sweep"]}
			}
			_, _, err := runCLI(args...)
			if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "belongs to a "+owner) {
				t.Errorf("%s into a %s's directory: %v; want an error naming it and its owner", k, owner, err)
			}
		}
	}
	after := snapshot()
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after refused writes", len(before), len(after))
	}
	for p, b := range before {
		if !bytes.Equal(after[p], b) {
			t.Errorf("%s changed", p)
		}
	}
	// Commands that own no directory refuse owned ones too.
	if _, err := claimDir(dirs["sweep"], "--out", ""); err == nil || !strings.Contains(err.Error(), "belongs to a sweep") {
		t.Errorf("calibrate/validate into a sweep's directory: %v", err)
	}
	// A held lock (a sweep running) stops a run, naming the holder.
	lock, err := atomicfile.LockDir(dirs["sweep"])
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, args := range [][]string{{"run", "--trace", smallTrace, "--n", "2", "--out", dirs["sweep"]}, tinySweep(dirs["sweep"]), {"plot", dirs["sweep"]}} {
		_, _, err := runCLI(args...)
		if err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
			t.Errorf("%s while the lock is held: %v; want the holder's pid", args[0], err)
		}
	}
}

// TestOutputPathsNeverCollide: a --trace-decisions file that is one of
// --out's files (however spelled), a lock file, a directory or a file in
// another command's directory is refused before anything is written.
func TestOutputPathsNeverCollide(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "out")
	link := filepath.Join(root, "link")
	os.MkdirAll(filepath.Join(root, "real"), 0o755)
	os.Symlink(filepath.Join(root, "real"), link)
	os.MkdirAll(out, 0o755) // an existing directory: nothing may land in it
	sweepDir := filepath.Join(root, "sweep")
	if _, _, err := runCLI(tinySweep(sweepDir)...); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		decisions, out, want string
	}{
		{filepath.Join(out, "summary.json"), out, "same file"},
		{filepath.Join(out, "manifest.json"), out, "same file"},
		{filepath.Join(root, "x", "..", "out", "requests.csv"), out, "same file"},
		{filepath.Join(link, "nvml.csv"), filepath.Join(root, "real"), "same file"},
		{filepath.Join(out, atomicfile.LockName), out, "same file"},
		{filepath.Join(root, "elsewhere", atomicfile.LockName), "", "lock file"},
		{filepath.Join(sweepDir, "decisions.jsonl"), "", "belongs to a sweep"},
		{filepath.Join(sweepDir, "summary.csv"), "", "belongs to a sweep"},
		{root, "", "is a directory"},
	} {
		args := []string{"run", "--trace", smallTrace, "--n", "2", "--trace-decisions", c.decisions}
		if c.out != "" {
			args = append(args, "--out", c.out)
		}
		_, _, err := runCLI(args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--trace-decisions") {
			t.Errorf("--trace-decisions %s --out %s: %v; want an error naming --trace-decisions, %q", c.decisions, c.out, err, c.want)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Fatalf("--trace-decisions %s: %s was written into", c.decisions, out)
		}
	}
	// Side by side they are fine.
	if _, _, err := runCLI("run", "--trace", smallTrace, "--n", "2", "--out", out, "--trace-decisions", filepath.Join(out, "decisions.jsonl")); err != nil {
		t.Fatal(err)
	}
	if b := read(t, filepath.Join(out, "summary.json")); !bytes.Contains(b, []byte(`"offered"`)) {
		t.Error("summary.json is not the summary")
	}
	if b := read(t, filepath.Join(out, "decisions.jsonl")); !bytes.Contains(b, []byte(`"outcome"`)) {
		t.Error("decisions.jsonl holds no decisions")
	}
	if pts, _ := filepath.Glob(filepath.Join(sweep.PointsDir(sweepDir), "*.json")); len(pts) != 4 {
		t.Errorf("the sweep has %d points", len(pts))
	}
}
