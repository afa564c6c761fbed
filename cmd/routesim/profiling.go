package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

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
