package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
)

// bigRun is the request count from which a run collects garbage at 25 %
// heap growth instead of Go's 100 %.
const bigRun = 100_000

// tuneGC lowers the garbage collector's heap growth target for a run of
// many requests, unless the user set GOGC. A long replay's heap is mostly
// state that lives for the whole run (requests, records, KV pools), so
// Go's default lets the process grow to twice that before collecting: a
// million requests at N = 512 under round-robin peaked at 2.0 GB RSS, and
// at 1.4 GB with 25 % (108–134 s against 133–143 s; kv 272 s against 233 s,
// within the 2-core machine's run-to-run noise). Small runs keep the
// default: there a lower target costs CPU (a sweep of the embedded trace
// took 26 % more CPU at 25 %).
func tuneGC(requests int, userSet bool) {
	if requests >= bigRun && !userSet {
		debug.SetGCPercent(25)
	}
}

// startProfiles starts a CPU profile to cpu and arranges a heap profile
// to mem (either "" = none), for `go tool pprof`; the returned function
// writes and closes them. Set by ROUTESIM_CPUPROFILE and
// ROUTESIM_MEMPROFILE, so every command can be profiled without a flag of
// its own. A profile that cannot be written is reported, never fatal.
func startProfiles(cpu, mem string) (stop func()) {
	var cf *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "routesim: ROUTESIM_CPUPROFILE:", err)
		} else {
			cf = f
		}
	}
	return func() {
		if cf != nil {
			pprof.StopCPUProfile()
			cf.Close()
		}
		if mem == "" {
			return
		}
		f, err := os.Create(mem)
		if err == nil {
			runtime.GC()
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "routesim: ROUTESIM_MEMPROFILE:", err)
		}
	}
}

// gogcSet reports whether the user chose the collector's target (GOGC).
func gogcSet() bool { return os.Getenv("GOGC") != "" }
