package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/scenario"
)

// numericFlags are run's flags that take a number (sweep adds its own
// below): the fuzz target gives each random values.
func numericFlags() []string {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	spec := scenario.Defaults()
	registerSim(fs, &spec)
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		switch f.Value.Type() {
		case "int", "int64", "uint64", "float64", "duration":
			out = append(out, f.Name)
		}
	})
	return out
}

// maxFuzzRepeat is the largest --repeat FuzzFlags runs: 20 requests ×
// 10,000 copies fit its 10 s, more is a long run asked for, not a runaway.
const maxFuzzRepeat = 10_000

// maxFuzzDraws is the largest --uncertainty FuzzFlags runs: each draw is
// another run; more is legitimate work, bounded by checkDraws.
const maxFuzzDraws = 20

// fuzzFlags is every numeric flag FuzzFlags varies: run's (bare names),
// then each other command's as "command:flag". New flags go at the end:
// the corpus refers to flags by index.
func fuzzFlags() []string {
	return append(numericFlags(), "sweep:seeds", "sweep:seed", "sweep:n", "sweep:rate-scale", "sweep:bootstrap", "sweep:jobs", "sweep:slo-ttft",
		"plan:slo-ttft-p95", "plan:slo-itl-p95", "plan:slo-e2e-p95", "plan:min-completeness", "plan:min-goodput", "plan:confidence",
		"plan:traffic-scale", "plan:n", "plan:gpu-hour-cost", "plan:uncertainty", "plan:seeds", "plan:setting",
		"calibrate:iters", "calibrate:isl-cv", "calibrate:isl-mean", "calibrate:tp", "calibrate:jobs",
		// Added with the flag audit: every numeric flag of every command.
		"uncertainty", "turns", "refresh-metrics-interval", "scorers",
		"sweep:uncertainty", "sweep:rate", "sweep:concurrency", "sweep:shard",
		"plan:jobs", "plan:seed", "plan:shard",
		"validate:draws", "validate:jobs", "calibrate:max-evals", "plot:slo-ttft")
}

// FuzzFlags: random values for every numeric flag of every command (on a
// 20-request trace): a result, or an error that names the flag (or the
// same error the command gives without it); never a panic or an internal
// error, and never a run longer than 10 s. Its seeds include every
// out-of-range value the audits found.
func FuzzFlags(f *testing.F) {
	flags := fuzzFlags()
	for i := range flags {
		for _, v := range []string{"NaN", "Inf", "-1", "0", "1e300", "1e-300", "18446744073709551615", "2..3", "1..2147483648", "1..9223372036854775807:2"} {
			f.Add(uint16(i), v)
		}
	}
	seed := func(flag, value string) { f.Add(uint16(slices.Index(flags, flag)), value) }
	for _, v := range []string{"9223372036854775807", "-9223372036854775808", "4e-10", "5e-10", "2562047h", "-1ns", "1e-300s"} {
		for _, flag := range flags {
			seed(flag, v)
		}
	}
	seed("request-timeout-seconds", "4e-10")       // issue 33 item 6
	seed("sweep:jobs", "100000000000")             // item 7
	seed("plan:jobs", "9223372036854775807")       // item 7
	seed("sweep:bootstrap", "9223372036854775807") // item 11
	seed("kv-event-lag", "2562047h")               // item 15
	seed("max-num-seqs", "9223372036854775807")    // item 16
	seed("max-num-batched-tokens", "-1")           // item 16
	seed("sweep:slo-ttft", "NaN")                  // item 18
	seed("plan:traffic-scale", "1e308")            // item 22
	seed("lru-capacity-per-server", "9223372036854775807")
	seed("scorers", "queue:1e308,kv-cache-utilization:1e308")
	seed("num-gpu-blocks-override", "1")
	seed("kvbm-cpu-cache-gb", "1e-300") // issue 39: holds no block
	seed("kvbm-disk-cache-gb", "1e300")
	seed("plan:setting", "max-num-seqs=-1")
	out := f.TempDir()
	// plot redraws a sweep: one to redraw (its metric goodput, whose SLO
	// the flag sets).
	if _, _, err := runCLI(fuzzArgs("sweep", "seeds", filepath.Join(out, "plotted"))...); err != nil {
		f.Fatal(err)
	}
	baseline := map[string]string{} // a template's own error, without the flag
	f.Fuzz(func(t *testing.T, which uint16, value string) {
		flag := flags[int(which)%len(flags)]
		cmd, name := "run", flag
		if c, n, ok := strings.Cut(flag, ":"); ok {
			cmd, name = c, n
		}
		dir := out
		if cmd == "plan" { // plan resumes from its --out: a fresh one each time
			dir = t.TempDir()
		}
		args := fuzzArgs(cmd, name, dir)
		if v, err := strconv.ParseInt(value, 0, 64); err == nil && (name == "repeat" && v > maxFuzzRepeat || name == "uncertainty" && v > maxFuzzDraws) {
			// Legitimate work that takes long: 20 requests × v copies
			// (a run's time grows with its requests; the bound on them is
			// tested in workload), or v + 1 runs.
			t.Skipf("--%s %d asks for that much work", name, v)
		}
		if name == "setting" {
			value = "max-num-seqs=" + value
		}
		base, ok := baseline[flag]
		if !ok { // in its own directory: plan would resume from it
			bdir := t.TempDir()
			_, _, err := runCLI(fuzzArgs(cmd, name, bdir)...)
			base = strings.ReplaceAll(fmt.Sprint(withFlags(err)), bdir, "DIR")
			baseline[flag] = base
		}
		args = append(args, "--"+name+"="+value)
		done := make(chan error, 1)
		go func() { _, _, err := runCLI(args...); done <- err }()
		select {
		case err := <-done:
			if err != nil && exitCode(err) == 3 {
				t.Fatalf("%v: internal error: %v", args, err)
			}
			if msg := fmt.Sprint(withFlags(err)); err != nil && strings.ReplaceAll(msg, dir, "DIR") != base && !strings.Contains(msg, "--"+name) {
				t.Fatalf("%v: the error does not name --%s:\n%s", args, name, msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: ran over 10 s", args)
		}
	})
}

// fuzzArgs is the command line FuzzFlags adds a flag to: small and valid
// on its own (or failing the same way every time, for calibrate).
func fuzzArgs(cmd, flag, out string) []string {
	trace := []string{"--trace", smallTrace, "--skip", "0", "--first", "20"}
	switch cmd {
	case "sweep":
		a := []string{"sweep", "--n", "2", "--seeds", "1", "--policy", "round-robin", "--quiet", "--bootstrap", "10", "--out", out, "--force"}
		switch flag {
		case "rate":
			return append(a, "--workload", "synthetic", "--requests", "20")
		case "concurrency":
			return append(a, "--workload", "sessions", "--sessions", "4")
		}
		return append(a, trace...)
	case "plan":
		return append([]string{"plan", "--n", "1..3", "--seeds", "1", "--policy", "round-robin", "--quiet", "--slo-ttft-p95", "1000",
			"--out", filepath.Join(out, "plan")}, trace...)
	case "validate":
		return []string{"validate", "--list"}
	case "plot":
		return []string{"plot", filepath.Join(out, "plotted"), "--metric", "goodput"}
	case "calibrate":
		if flag == "max-evals" { // spec mode: the flag is checked before the (missing) spec is read
			return []string{"calibrate", "--spec", filepath.Join(out, "no-such-spec.json"), "--quiet"}
		}
		// H200 rows do not exist: the flags are checked, no fit runs.
		const data = "../../testdata/mlenergy-h100-v3/"
		return []string{"calibrate", "--mlenergy", data + "runs.csv", "--osl", data + "osl-qwen3-8b.json", "--model", "Qwen3-8B",
			"--gpu", "H200", "--quiet", "--out", filepath.Join(out, "calib")}
	}
	a := append([]string{"run", "--n", "2"}, trace...)
	// The workload and policy that read the flag, so its value is used.
	for _, w := range []struct {
		name     string
		defaults []string // flag, value, …
	}{{"sessions", []string{"concurrency", "2", "sessions", "4"}}, {"synthetic", []string{"requests", "20", "rate", "5"}}} {
		if !slices.Contains(workloadFlags[w.name], flag) {
			continue
		}
		a = []string{"run", "--n", "2", "--workload", w.name}
		for i := 0; i < len(w.defaults); i += 2 {
			if w.defaults[i] != flag {
				a = append(a, "--"+w.defaults[i], w.defaults[i+1])
			}
		}
	}
	for _, name := range policy.Names() {
		if e, _ := policy.Lookup(name); slices.Contains(e.Reads(), flag) {
			if flag == "metrics-lag" {
				name = "llm-d" // the others read it with --busy-signal engine only
			}
			return append(a, "--policy", name)
		}
	}
	return a
}

// TestFuzzFlagsCoverEveryNumericFlag: FuzzFlags varies every flag of every
// command that takes a number (typed int, uint, float, duration or a list
// of them, or a string that carries numbers), so a new flag cannot escape
// it. A sweep or plan flag that is run's own (same help) is covered by
// run's entry.
func TestFuzzFlagsCoverEveryNumericFlag(t *testing.T) {
	covered := fuzzFlags()
	numericStrings := map[string][]string{ // string flags that carry numbers
		"run":   {"turns", "refresh-metrics-interval", "scorers"},
		"sweep": {"n", "rate", "concurrency", "shard"},
		"plan":  {"n", "shard", "setting"},
	}
	help := func(cmd string) map[string]string { // flag → its help line
		out, _, err := runCLI(cmd, "--help")
		if err != nil {
			t.Fatal(err)
		}
		lines := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && strings.HasPrefix(f[0], "--") {
				lines[strings.TrimPrefix(f[0], "--")] = l
			}
		}
		return lines
	}
	numeric := func(line string) bool {
		f := strings.Fields(line)
		return slices.Contains([]string{"int", "uint", "float", "duration", "range", "ints", "floats"}, f[1]) || strings.Contains(f[1], "[,")
	}
	// Checked only before a fit, which runs longer than FuzzFlags' 10 s
	// on any valid value; TestNewFlagsRefuseBadValues tables their bad
	// ones.
	exempt := []string{"calibrate:prior-weight", "calibrate:model-error"}
	run := help("run")
	for _, cmd := range []string{"run", "sweep", "plan", "calibrate", "validate", "merge", "profiles", "plot"} {
		for flag, line := range help(cmd) {
			if !numeric(line) && !slices.Contains(numericStrings[cmd], flag) {
				continue
			}
			name := cmd + ":" + flag
			if cmd == "run" || run[flag] == line {
				name = flag
			}
			if !slices.Contains(covered, name) && !slices.Contains(exempt, name) {
				t.Errorf("FuzzFlags does not vary %s --%s (%s)", cmd, flag, strings.TrimSpace(line))
			}
		}
	}
}
