// Command routesim simulates LLM-serving clusters under routing policies.
// See the README for the commands and their flags.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/internal/crash"
)

func main() {
	// An interrupted command removes its unpublished temporaries (and its
	// sweep lock) before exiting: 130 for SIGINT, 143 for SIGTERM.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		atomicfile.AbortAll()
		fmt.Fprintf(os.Stderr, "routesim: %v: stopped; unpublished outputs removed\n", s)
		if s == syscall.SIGTERM {
			os.Exit(143)
		}
		os.Exit(130)
	}()
	stop := startProfiles(os.Getenv("ROUTESIM_CPUPROFILE"), os.Getenv("ROUTESIM_MEMPROFILE"))
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "routesim:", err)
		var in *crash.Internal
		if errors.As(err, &in) && os.Getenv("ROUTESIM_DEBUG") != "" {
			os.Stderr.Write(in.Stack)
		}
		os.Exit(exitCode(err))
	}
}
