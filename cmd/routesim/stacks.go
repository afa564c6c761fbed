package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/model"
)

// stacksCmd lists the serving stacks and their fixed costs: each term's
// value, when the simulation charges it and its source.
func stacksCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("routesim stacks", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim stacks\n\nList the serving stacks (frontend, worker, engine loop) and their fixed costs: each term's value, when a run charges it, and where the value comes from. Terms that are profile coefficients are fitted by routesim calibrate --fit NAME.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	for i, s := range model.Stacks {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		use := fmt.Sprintf("--engine %s runs it", s.Engine)
		if s.Reference {
			use = "reference: no run selects it"
		}
		fmt.Fprintf(stdout, "%s (%s)\n  %s\n", s.Name, use, s.Doc)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  COMPONENT\tTERM\tVALUE\tCHARGED")
		for _, t := range s.Terms {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.Component, t.Name(), termValue(t), orDash(t.Applies))
		}
		tw.Flush()
		for _, t := range s.Terms {
			fmt.Fprintf(stdout, "  %s: %s\n", t.Name(), t.Source)
		}
	}
	_, err := fmt.Fprintln(stdout, "\nA profile carries the terms it was measured with (routesim profiles -v shows them); a run on another stack than its profile's takes that stack's own terms (\"own\" above) and keeps the profile's shared ones (\"prior\": a profile's own value is used).")
	return err
}

// termValue writes a stack term's value with its unit, and whether it is
// the stack's own or a prior for a shared term.
func termValue(t model.StackTerm) string {
	if !t.Modelled() || math.IsNaN(t.Value) {
		return "not charged"
	}
	c, _ := model.CoefficientByName(t.Coef)
	v := fixedCost(t.Value, c.Unit)
	if t.Own {
		return v + " (own)"
	}
	return v + " (prior)"
}

// fixedCost writes a time in ns in the unit that reads best: "580 µs/iteration".
func fixedCost(ns float64, unit string) string {
	per := strings.TrimPrefix(unit, "ns")
	switch {
	case ns == 0:
		return "0"
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms%s", ns/1e6, per)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs%s", ns/1e3, per)
	}
	return fmt.Sprintf("%.3g ns%s", ns, per)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// stackLine is a profile's fixed costs on one line: its stack, the
// frontend's terms and the executor's host time.
func stackLine(p *model.Profile) string {
	stack := p.Stack
	if stack == "" {
		stack = "vLLM (unnamed)"
	}
	s := fmt.Sprintf("stack %s: frontend %s + %s before routing", stack, fixedCost(p.FrontendNs, "ns/request"), fixedCost(p.FrontendNsPerInputToken, "ns/prompt token"))
	if p.ExecutorHostNs > 0 {
		s += fmt.Sprintf("; TensorRT-LLM executor host %s", fixedCost(p.ExecutorHostNs, "ns/iteration"))
	}
	return s
}
