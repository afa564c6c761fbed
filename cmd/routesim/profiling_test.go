package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: only a big run without the user's GOGC lowers the
// collector's target.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	for _, c := range []struct {
		requests int
		userSet  bool
		want     int
	}{{bigRun - 1, false, 100}, {bigRun, true, 100}, {bigRun, false, 25}} {
		debug.SetGCPercent(100)
		tuneGC(c.requests, c.userSet)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("tuneGC(%d, %v): GC percent %d, want %d", c.requests, c.userSet, got, c.want)
		}
	}
}
