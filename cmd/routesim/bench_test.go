package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkSweep: the default sweep's grid — N = 2..16, three policies,
// five seeds, 1,000 requests per run (225 runs) — with all outputs and
// plots, on every core.
func BenchmarkSweep(b *testing.B) {
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "sweep")
		if err := sweepWithContext(context.Background(), []string{"--n", "2..16", "--seeds", "5", "--quiet", "--out", dir}, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunFirst1000: `routesim run --first 1000` on the embedded
// default, start to summary (what a user waits for; issue-14 target: a
// process under 30 ms).
func BenchmarkRunFirst1000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := runCmd([]string{"--first", "1000"}, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
