// Command routesim simulates LLM-serving clusters under routing policies.
// See the README for the commands and their flags.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/routesim/routesim/internal/crash"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "routesim:", err)
		var in *crash.Internal
		if errors.As(err, &in) && os.Getenv("ROUTESIM_DEBUG") != "" {
			os.Stderr.Write(in.Stack)
		}
		os.Exit(exitCode(err))
	}
}
