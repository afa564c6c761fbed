package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/internal/crash"
	"github.com/routesim/routesim/internal/suggest"
)

// Version is routesim's version, written into every manifest.
const Version = "0.1.0-dev"

// usageError marks errors in how routesim was called (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCode: 2 for a usage error (bad flags or settings), 3 for an
// internal error (a bug), 1 for anything else (bad input files, I/O, a run
// that failed).
func exitCode(err error) int {
	var u usageError
	var in *crash.Internal
	switch {
	case errors.As(err, &in):
		return 3
	case errors.As(err, &u):
		return 2
	}
	return 1
}

type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"run":       {"simulate one workload on one cluster and print its summary", runCmd},
		"sweep":     {"run N × policy × seed grids in parallel, find crossovers, write tables and plots", sweepCmd},
		"merge":     {"join the outputs of sharded sweeps", mergeCmd},
		"plan":      {"find the smallest cluster per policy that meets latency and completeness objectives", planCmd},
		"plot":      {"redraw a sweep's plots from its outputs", plotCmd},
		"calibrate": {"fit a step-time profile to measured runs (AIPerf exports, NVML samples)", calibrateCmd},
		"policies":  {"list the routing policies, their parameters and defaults", policiesCmd},
		"profiles":  {"list the step-time profiles (GPU, model, TP, source, fit error)", profilesCmd},
		"stacks":    {"list the serving stacks' fixed costs (frontend, engine loop) with their values and sources", stacksCmd},
		"explore":   {"serve a local web page that re-simulates the trade-off as its controls move", exploreCmd},
		"validate":  {"predict measured runs routesim was not fitted on, with bands, and check the acceptance", validateCmd},
		"version":   {"print the version and the versions of the modules it was built with", versionCmd},
	}
}

// run is the whole CLI: routesim COMMAND [flags].
func run(args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	switch {
	case len(args) == 0 || args[0] == "-h" || args[0] == "--help" || (args[0] == "help" && len(args) == 1):
		_, err := io.WriteString(stdout, usage(cmds))
		return err
	case args[0] == "help": // routesim help CMD = routesim CMD --help
		args = []string{args[1], "--help"}
	case args[0] == "--version" || args[0] == "-V":
		args = []string{"version"}
	}
	c, ok := cmds[args[0]]
	if !ok {
		return usageError{fmt.Errorf("unknown command %q\n%s", args[0], usage(cmds))}
	}
	if wantsHelp(args[1:]) {
		stderr = stdout // help is output: routesim run --help | less
	}
	if args[0] == "run" || args[0] == "sweep" || args[0] == "plan" {
		rest, err := expandAliases(args[1:])
		if err != nil {
			return err
		}
		args = append([]string{args[0]}, rest...)
	}
	return withFlags(crash.Guard(func() error { return c.run(args[1:], stdout, stderr) }))
}

// wantsHelp says whether a command's arguments ask for help (before any
// "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help", "-help":
			return true
		}
	}
	return false
}

// versionCmd prints routesim's version and, when the binary carries build
// information, the Go version and every module it was built with.
func versionCmd(_ []string, out, _ io.Writer) error {
	fmt.Fprintln(out, "routesim", Version)
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintln(out, bi.GoVersion)
		for _, m := range bi.Deps {
			fmt.Fprintf(out, "%s %s\n", m.Path, m.Version)
		}
	}
	return nil
}

func usage(cmds map[string]command) string {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("routesim: a discrete-event simulator of LLM-serving routing policies\n\nUsage: routesim COMMAND [flags]\n\nCommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, cmds[n].summary)
	}
	b.WriteString("\nRun 'routesim help COMMAND' (or 'routesim COMMAND --help') for a command's flags; 'routesim --version' for versions.\n")
	return b.String()
}

// parseFlags parses a command's flags; help is true (and err nil) when the
// user asked for --help, which pflag has already printed.
func parseFlags(fs *pflag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return true, nil
		}
		return false, usageError{didYouMean(fs, err)}
	}
	return false, nil
}

// didYouMean adds the nearest flag (or alias) of fs to pflag's error for
// an unknown flag.
func didYouMean(fs *pflag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var known []string
	fs.VisitAll(func(f *pflag.Flag) { known = append(known, f.Name) })
	if fs.Lookup("tp") != nil { // run, sweep, plan: the aliases expandAliases takes
		for _, a := range flagAliases {
			known = append(known, a.alias)
		}
	}
	if best, ok := suggest.Nearest(name, known); ok {
		return fmt.Errorf("%w; did you mean --%s?", err, best)
	}
	return err
}
