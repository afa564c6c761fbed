//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptLeavesNoTemporaries builds the command, interrupts a sweep
// while it writes, and checks it exits 130 leaving neither temporaries nor
// its lock behind (finished points stay: a rerun resumes from them).
func TestInterruptLeavesNoTemporaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "routesim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "sweep", "--n", "2..16", "--seeds", "5", "--jobs", "2", "--quiet", "--per-request", "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the first point files exist (the sweep is writing).
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if pts, _ := filepath.Glob(filepath.Join(out, "points", "*.json")); len(pts) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted sweep: %v (want exit 130)", err)
	}
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && (strings.Contains(info.Name(), ".tmp-") || info.Name() == ".routesim.lock") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}
