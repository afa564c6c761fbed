// Command routesim simulates LLM-serving clusters under routing policies.
// See the README for the commands and their flags.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "routesim:", err)
		os.Exit(exitCode(err))
	}
}
