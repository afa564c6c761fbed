package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/routesim/routesim/sweep"
)

// TestConcurrentSweepsNeverMix starts two different sweeps on one
// directory at once, 20 times: at most one may succeed, and the directory
// then holds only its points (every point file passes the digest check).
func TestConcurrentSweepsNeverMix(t *testing.T) {
	for trial := 0; trial < 20; trial++ {
		dir := filepath.Join(t.TempDir(), "out")
		args := [2][]string{
			{"sweep", "--trace", smallTrace, "--skip", "0", "--n", "2", "--seeds", "1", "--quiet", "--policy", "round-robin,kv", "--out", dir},
			{"sweep", "--trace", smallTrace, "--skip", "0", "--n", "2", "--seeds", "2", "--quiet", "--policy", "round-robin,kv", "--out", dir},
		}
		var errs [2]error
		var wg sync.WaitGroup
		for i := range args {
			wg.Add(1)
			go func() { defer wg.Done(); _, _, errs[i] = runCLI(args[i]...) }()
		}
		wg.Wait()
		ok := 0
		for i, err := range errs {
			if err == nil {
				ok++
				continue
			}
			if !strings.Contains(err.Error(), "being written by another routesim") && !strings.Contains(err.Error(), "holds a different sweep") {
				t.Errorf("trial %d, sweep %d: unexpected error %v", trial, i, err)
			}
		}
		if ok == 2 {
			t.Fatalf("trial %d: both sweeps exited 0 into one directory", trial)
		}
		m, err := sweep.ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sweep.Load(dir, m.Grid.Points(), m.Digest()); err != nil {
			t.Errorf("trial %d: %v", trial, err)
		}
		if entries, _ := os.ReadDir(sweep.PointsDir(dir)); len(entries) != len(m.Grid.Points()) {
			t.Errorf("trial %d: %d point files for %d points", trial, len(entries), len(m.Grid.Points()))
		}
	}
}

// TestPointFilesAreChecked: a point file replaced by another point's, by
// {} or by another sweep's is refused, naming the file; --recompute-bad
// reruns it and restores the original outputs.
func TestPointFilesAreChecked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"sweep", "--trace", smallTrace, "--skip", "0", "--n", "2..4:2", "--seeds", "1", "--quiet", "--policy", "round-robin", "--out", dir}
	if _, _, err := runCLI(args...); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "summary.csv"))
	pts, _ := filepath.Glob(filepath.Join(sweep.PointsDir(dir), "*.json"))
	if len(pts) != 2 {
		t.Fatalf("%d point files", len(pts))
	}
	other, _ := os.ReadFile(pts[1])
	for name, body := range map[string][]byte{"copy of another point": other, "empty object": []byte("{}")} {
		os.WriteFile(pts[0], body, 0o644)
		_, _, err := runCLI(args...)
		if err == nil || !strings.Contains(err.Error(), filepath.Base(pts[0])) || !strings.Contains(err.Error(), "--recompute-bad") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := runCLI(append(args, "--recompute-bad")...); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "summary.csv")); string(got) != string(want) {
		t.Error("summary.csv differs after recomputing the bad point")
	}
	// A different sweep on the same directory names what differs; --force
	// replaces it.
	_, _, err := runCLI("sweep", "--trace", smallTrace, "--skip", "0", "--n", "2..4:2", "--seeds", "2", "--quiet", "--policy", "round-robin", "--out", dir)
	if err == nil || !strings.Contains(err.Error(), "grid.seeds 1 there, 2 here") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("different sweep: %v", err)
	}
	if _, _, err := runCLI("sweep", "--trace", smallTrace, "--skip", "0", "--n", "2..4:2", "--seeds", "2", "--quiet", "--policy", "round-robin", "--out", dir, "--force"); err != nil {
		t.Errorf("--force: %v", err)
	}
}

// TestInvalidSweepWritesNothing: a sweep whose configuration fails to
// build (here a max-model-len no worker can hold) writes nothing, so the
// corrected sweep runs in the same directory.
func TestInvalidSweepWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	_, _, err := runCLI("sweep", "--trace", smallTrace, "--skip", "0", "--n", "2", "--seeds", "1", "--quiet", "--policy", "round-robin", "--gpu-memory-utilization", "0.3", "--out", dir)
	if err == nil {
		t.Fatal("an impossible configuration was accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d entries in --out", len(entries))
	}
	if _, _, err := runCLI("sweep", "--trace", smallTrace, "--skip", "0", "--n", "2", "--seeds", "1", "--quiet", "--policy", "round-robin", "--out", dir); err != nil {
		t.Errorf("the corrected sweep: %v", err)
	}
}

// TestLoadSweepsKeepTheirAxis: a --rate sweep's summary.csv has a rate
// column with the swept values (and an empty concurrency column), a
// synthetic sweep offers what the header says: no trace-window defaults.
func TestLoadSweepsKeepTheirAxis(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	stdout, _, err := runCLI("sweep", "--workload", "synthetic", "--requests", "40", "--rate", "2..4:2", "--n", "2", "--seeds", "1", "--quiet", "--policy", "round-robin", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "offered: 40 synthetic requests at 2 req/s × rate scale 1 = 2 req/s") {
		t.Errorf("header does not state the offered load:\n%s", stdout)
	}
	rows := readCSVRows(t, filepath.Join(dir, "summary.csv"))
	if len(rows) != 3 {
		t.Fatalf("%d rows, want a header and 2", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, want := range []string{"2", "4"} {
		r := rows[1+i]
		if r[col["rate_per_s"]] != want || r[col["concurrency"]] != "" || r[col["offered"]] != "40" {
			t.Errorf("row %d: rate %q, concurrency %q, offered %q; want %s, empty, 40", i, r[col["rate_per_s"]], r[col["concurrency"]], r[col["offered"]], want)
		}
	}
}
