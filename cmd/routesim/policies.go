package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/policy"
)

// policiesCmd lists every registered policy with the parameters it reads
// and their defaults.
func policiesCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim policies", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim policies\n\nList the routing policies, what each does, the parameter flags it reads (with defaults) and the router settings it observes.\n")
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	docs := map[string]policy.Param{}
	for _, d := range policy.ParamList {
		docs[d.Flag] = d
	}
	width := 0
	for _, d := range policy.ParamList {
		width = max(width, len(d.Flag))
	}
	var b strings.Builder
	b.WriteString("Policies (routesim run --policy NAME [parameter flags]):\n")
	for _, name := range policy.Names() {
		e, _ := policy.Lookup(name)
		fmt.Fprintf(&b, "\n%s\n    %s\n", name, e.Summary)
		if e.Source != "" {
			fmt.Fprintf(&b, "    source: %s\n", e.Source)
		}
		for _, u := range e.Uses {
			d := docs[u]
			fmt.Fprintf(&b, "    --%-*s  default %-8s  %s\n", width, u, d.DefaultText(), d.Help)
		}
		for _, f := range e.Reads()[len(e.Uses):] {
			d := routerFlagDocs[f]
			fmt.Fprintf(&b, "    --%-*s  default %-8s  %s\n", width, f, d[0], d[1])
		}
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}

// routerFlagDocs describes the router settings policy.Entry.Reads names
// (default, meaning) for the policy list.
var routerFlagDocs = map[string][2]string{
	"metrics-lag":  {"1ms", "delay of the workers' published KV usage and waiting queues (engine metrics)"},
	"kv-event-lag": {"0s", "delay of KV stored/removed events reaching the router"},
}
