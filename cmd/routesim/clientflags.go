package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/scenario"
)

// clientFlag is a load generator's flag (AIPerf, vllm bench serve) that
// routesim accepts: it sets routesim's own flag where the meaning is the
// same for the run's workload, and is refused with a pointer where it is
// not. Sources: vLLM's benchmarks/serve.py argument parser
// (vllm-project/vllm, vllm/benchmarks/serve.py: --request-rate,
// --burstiness, --num-prompts, --max-concurrency, --goodput, --seed) and
// AIPerf's CLI options (ai-dynamo/aiperf: --request-rate, --request-count,
// --random-seed, --input-file).
type clientFlag struct {
	name, from, help string
	// apply sets routesim's flags on fs for the run's workload w from the
	// value v, or says why the flag has no routesim meaning there.
	apply func(fs *pflag.FlagSet, w, v string) error
}

// clientFlags are the load generators' flags run, sweep and plan accept.
var clientFlags = []clientFlag{
	{"request-rate", "vllm bench serve, AIPerf", "requests per second of a synthetic stream (= --rate); a trace keeps its own times (scale them with --rate-scale)", applyRequestRate},
	{"burstiness", "vllm bench serve", "gamma shape of a synthetic stream's inter-arrivals (1 = Poisson; = --arrival gamma --arrival-cv 1/√B)", applyBurstiness},
	{"num-prompts", "vllm bench serve", "requests to send: a synthetic stream's --requests, a trace's --first", applyRequestCount},
	{"request-count", "AIPerf", "requests to send: a synthetic stream's --requests, a trace's --first", applyRequestCount},
	{"random-seed", "AIPerf", "= --seed", sameAs("seed")},
	{"input-file", "AIPerf (--custom-dataset-type mooncake_trace)", "Mooncake trace to replay (= --trace)", sameAs("trace")},
	{"max-concurrency", "vllm bench serve", "not simulated: routesim's open-loop clients keep no cap on requests in flight", refuse("routesim's open-loop clients keep no cap on requests in flight; a closed loop of N clients is --workload sessions --concurrency N")},
	{"goodput", "vllm bench serve", "not simulated: per-request SLOs", refuse("routesim's objectives are percentiles over offered requests: routesim plan --slo-ttft-p95/--slo-itl-p95/--slo-e2e-p95 with --min-goodput")},
}

// registerClientFlags adds the load generators' flags to fs.
func registerClientFlags(fs *pflag.FlagSet) {
	for _, c := range clientFlags {
		fs.String(c.name, "", fmt.Sprintf("%s [%s]", c.help, c.from))
	}
}

// applyClientFlags resolves the load generators' flags the user set into
// routesim's, for the workload the flags and any scenario file chose.
// A client flag and the routesim flag it sets may not both be given.
func applyClientFlags(fs *pflag.FlagSet, s *scenario.Spec) error {
	w := s.Workload
	if w == "" {
		w = "trace"
	}
	for _, c := range clientFlags {
		f := fs.Lookup(c.name)
		if f == nil || !f.Changed {
			continue
		}
		if err := c.apply(fs, w, f.Value.String()); err != nil {
			return usageError{fmt.Errorf("--%s (%s): %w", c.name, c.from, err)}
		}
	}
	return nil
}

// set sets routesim's flag name to v, refusing it if the user set it too.
func set(fs *pflag.FlagSet, name, v string) error {
	f := fs.Lookup(name)
	if f == nil {
		return fmt.Errorf("this command has no --%s", name)
	}
	if f.Changed {
		return fmt.Errorf("--%s is set too: give one of them", name)
	}
	if err := fs.Set(name, v); err != nil {
		return fmt.Errorf("as --%s: %w", name, err)
	}
	return nil
}

func sameAs(name string) func(*pflag.FlagSet, string, string) error {
	return func(fs *pflag.FlagSet, _, v string) error { return set(fs, name, v) }
}

func refuse(why string) func(*pflag.FlagSet, string, string) error {
	return func(*pflag.FlagSet, string, string) error { return fmt.Errorf("%s", why) }
}

func applyRequestRate(fs *pflag.FlagSet, w, v string) error {
	switch w {
	case "synthetic":
		if r, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && math.IsInf(r, 1) {
			return fmt.Errorf("inf (every request at once) is not a rate routesim draws: give requests per second")
		}
		return set(fs, "rate", v)
	case "sessions":
		return fmt.Errorf("--workload sessions is closed-loop: its load is --concurrency")
	}
	return fmt.Errorf("a trace replays its own arrival times: scale them with --rate-scale, or draw a stream at this rate with --workload synthetic")
}

func applyBurstiness(fs *pflag.FlagSet, w, v string) error {
	if w != "synthetic" {
		return fmt.Errorf("shapes the arrivals of --workload synthetic only (the workload is %s)", w)
	}
	b, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(b > 0) || math.IsInf(b, 0) {
		return fmt.Errorf("%q: want a positive number (1 = Poisson)", v)
	}
	if b == 1 {
		return set(fs, "arrival", "poisson")
	}
	if err := set(fs, "arrival", "gamma"); err != nil {
		return err
	}
	return set(fs, "arrival-cv", strconv.FormatFloat(1/math.Sqrt(b), 'g', -1, 64))
}

func applyRequestCount(fs *pflag.FlagSet, w, v string) error {
	switch w {
	case "synthetic":
		return set(fs, "requests", v)
	case "trace":
		return set(fs, "first", v)
	}
	return fmt.Errorf("--workload sessions counts conversations (--sessions) or runs for --duration, not requests")
}
