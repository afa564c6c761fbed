package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sweep"
)

// TestNoProgressLineInFiles: with stderr redirected to a file, run sets
// no progress hook, and sweep logs whole lines (no carriage return).
func TestNoProgressLineInFiles(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run := (&scenario.Built{}).Run(0)
	if line := runProgress(f, run, nil); line != nil || run.Config.Progress != nil {
		t.Error("run: a progress line on a file")
	}
	prog, line := sweepProgress(f, false)
	if line != nil {
		t.Error("sweep: a progress line on a file")
	}
	prog(1, 2, sweep.Point{N: 2, Policy: "kv"})
	prog(2, 2, sweep.Point{N: 4, Policy: "kv"})
	b := string(read(t, f.Name()))
	if strings.Contains(b, "\r") || !strings.Contains(b, "point 1/2 done") || !strings.HasSuffix(b, "(ETA 0s)\n") {
		t.Errorf("sweep's log on a file: %q", b)
	}
}
