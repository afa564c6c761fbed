package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/policy"
)

// helpGroup is one section of a command's --help.
type helpGroup struct {
	title string
	flags []string
}

// simHelpGroups sort the simulating commands' flags for --help; a flag in
// none of them is the command's own and comes first.
var simHelpGroups = []helpGroup{
	{"Workload", append([]string{"workload", "scenario", "trace", "max-isl", "skip", "first", "repeat", "stream", "slices",
		"rate-scale", "traffic-scale", "warmup", "request-timeout-seconds", "retry", "retry-backoff"},
		append(workloadFlags["synthetic"], workloadFlags["sessions"]...)...)},
	{"Client flags (AIPerf and vllm bench serve names, resolved for the workload)", clientFlagNames()},
	{"Deployment", []string{"gpu", "model", "tp", "quant", "kv-cache-dtype", "profile", "engine", "uncertainty"}},
	{"Engine (vLLM, TensorRT-LLM)", []string{"block-size", "max-model-len", "max-num-seqs", "max-num-batched-tokens",
		"gpu-memory-utilization", "enable-prefix-caching", "vllm-version", "num-gpu-blocks-override", "kv-cache-tokens",
		"enforce-eager", "capacity-scheduler-policy", "enable-chunked-prefill", "disable-overlap-scheduler", "free-gpu-memory-fraction"}},
	{"Router", append([]string{"dynamo-version", "kv-event-lag", "metrics-lag", "event-plane-delay"}, paramFlagNames()...)},
	{"Outputs and run control", []string{"out", "per-request", "trace-decisions", "start-time", "jobs", "shard", "quiet",
		"dry-run", "force", "recompute-bad", "check-invariants"}},
}

func clientFlagNames() []string {
	out := make([]string, len(clientFlags))
	for i, c := range clientFlags {
		out[i] = c.name
	}
	return out
}

func paramFlagNames() []string {
	out := make([]string, len(policy.ParamList))
	for i, d := range policy.ParamList {
		out[i] = d.Flag
	}
	return out
}

// groupedUsage is fs's flags under the titles of groups, the command's own
// flags (in no group) first under own, each wrapped to the terminal.
func groupedUsage(fs *pflag.FlagSet, own string, groups []helpGroup) string {
	width := helpWidth()
	placed := map[string]bool{}
	sections := make([]*pflag.FlagSet, len(groups))
	for i, g := range groups {
		sections[i] = pflag.NewFlagSet(g.title, pflag.ContinueOnError)
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil && !placed[name] {
				sections[i].AddFlag(f)
				placed[name] = true
			}
		}
	}
	rest := pflag.NewFlagSet(own, pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		if !placed[f.Name] {
			rest.AddFlag(f)
		}
	})
	var b strings.Builder
	write := func(title string, s *pflag.FlagSet) {
		if !s.HasFlags() {
			return
		}
		b.WriteString("\n" + title + ":\n" + s.FlagUsagesWrapped(width))
	}
	write(own, rest)
	for i, g := range groups {
		write(g.title, sections[i])
	}
	return b.String()
}

// helpWidth is the width help wraps to: the terminal's, else $COLUMNS,
// else 100 columns.
func helpWidth() int {
	if w := terminalWidth(os.Stdout); w >= 40 {
		return w
	}
	if w, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && w >= 40 {
		return w
	}
	return 100
}
