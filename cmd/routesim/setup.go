package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim/scenario"
	"github.com/routesim/routesim/sim/workload"
)

// registerSim binds the flags every simulating command shares to s, which
// must hold scenario.Defaults(). Names follow vLLM and Dynamo.
func registerSim(fs *pflag.FlagSet, s *scenario.Spec) {
	fs.StringVar(&s.Trace, "trace", s.Trace, "Mooncake JSONL trace: a file (.jsonl or .jsonl.gz) or an embedded name ("+joinNames(workload.EmbeddedNames())+")")
	fs.IntVar(&s.MaxISL, "max-isl", s.MaxISL, "drop requests with more input tokens (0 = keep all)")
	fs.IntVar(&s.Skip, "skip", s.Skip, "skip the first K requests (after --max-isl)")
	fs.IntVar(&s.First, "first", s.First, "keep only the first K requests (after --skip; 0 = all)")
	fs.Float64Var(&s.RateScale, "rate-scale", s.RateScale, "multiply the arrival rate (2 = arrivals twice as fast)")
	fs.IntVar(&s.N, "n", s.N, "number of workers (one GPU or one TP group each)")
	fs.StringVar(&s.Policy, "policy", s.Policy, "routing policy ("+joinNames(policy.Names())+"; see routesim policies)")
	fs.StringVar(&s.GPU, "gpu", s.GPU, "GPU name (see routesim profiles)")
	fs.StringVar(&s.Model, "model", s.Model, "model name")
	fs.IntVar(&s.TP, "tp", s.TP, "tensor-parallel degree of a worker")
	fs.StringVar(&s.Quant, "quant", s.Quant, "weight format: bf16 or fp8")
	fs.StringVar(&s.KVDtype, "kv-cache-dtype", s.KVDtype, "KV cache element type: auto (= bf16) or fp8")
	fs.StringVar(&s.Profile, "profile", s.Profile, "step-time profile JSON (default: the built-in one for --gpu/--model/--tp, else a roofline estimate)")
	fs.IntVar(&s.BlockSize, "block-size", s.BlockSize, "KV block size in tokens (must divide 512)")
	fs.IntVar(&s.MaxModelLen, "max-model-len", s.MaxModelLen, "longest ISL+OSL served (0 = the model's max_position_embeddings)")
	fs.IntVar(&s.MaxNumSeqs, "max-num-seqs", s.MaxNumSeqs, "running requests per worker (0 = vLLM's default for the GPU: 256 on A100, 1024 on H100/H200)")
	fs.IntVar(&s.MaxNumBatchedTokens, "max-num-batched-tokens", s.MaxNumBatchedTokens, "tokens per engine step (0 = vLLM's default: 2048 on A100, 8192 on H100/H200)")
	fs.Float64Var(&s.GPUMemUtil, "gpu-memory-utilization", s.GPUMemUtil, "fraction of GPU memory vLLM may use")
	fs.BoolVar(&s.PrefixCaching, "enable-prefix-caching", s.PrefixCaching, "reuse cached prompt blocks (--enable-prefix-caching=false to disable)")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "seed of every random stream in the run")
	fs.BoolVar(&s.CheckInvariants, "check-invariants", s.CheckInvariants, "check KV-cache invariants after every step (slow; for debugging)")
	for _, d := range policy.ParamDocs {
		registerParam(fs, &s.Policies, d)
	}
	fs.DurationVar(&s.KVEventLag, "kv-event-lag", s.KVEventLag, "delay of the workers' KV stored/removed events reaching the router")
	fs.DurationVar(&s.MetricsLag, "metrics-lag", s.MetricsLag, "delay of the workers' published KV usage (--busy-signal engine; Dynamo publishes 1 ms after a change)")
	fs.IntVar(&s.Retry, "retry", s.Retry, "client re-sends of a rejected request (0 = none, like AIPerf)")
	fs.DurationVar(&s.RetryBackoff, "retry-backoff", s.RetryBackoff, "wait before the first re-send; doubled for each further one")
}

// registerParam adds the flag for one policy parameter, bound to its field.
func registerParam(fs *pflag.FlagSet, p *policy.Params, d policy.ParamDoc) {
	switch d.Flag {
	case "overlap-score-credit":
		fs.Float64Var(&p.OverlapScoreCredit, d.Flag, p.OverlapScoreCredit, d.Help)
	case "prefill-load-scale":
		fs.Float64Var(&p.PrefillLoadScale, d.Flag, p.PrefillLoadScale, d.Help)
	case "router-temperature":
		fs.Float64Var(&p.RouterTemperature, d.Flag, p.RouterTemperature, d.Help)
	case "active-decode-blocks-threshold":
		fs.Float64Var(&p.ActiveDecodeBlocksThreshold, d.Flag, p.ActiveDecodeBlocksThreshold, d.Help)
	case "active-prefill-tokens-threshold":
		fs.IntVar(&p.ActivePrefillTokensThreshold, d.Flag, p.ActivePrefillTokensThreshold, d.Help)
	case "active-prefill-tokens-threshold-frac":
		fs.Float64Var(&p.ActivePrefillTokensThresholdFrac, d.Flag, p.ActivePrefillTokensThresholdFrac, d.Help)
	case "busy-signal":
		fs.StringVar(&p.BusySignal, d.Flag, p.BusySignal, d.Help)
	case "router-queue-threshold":
		fs.Float64Var(&p.RouterQueueThreshold, d.Flag, p.RouterQueueThreshold, d.Help)
	case "max-queued-isl-tokens":
		fs.IntVar(&p.MaxQueuedISLTokens, d.Flag, p.MaxQueuedISLTokens, d.Help)
	default:
		panic("routesim: policy parameter " + d.Flag + " has no flag")
	}
}

// buildSim validates the flags (all problems at once), reconciles a
// --profile file with the deployment flags, and builds the run.
func buildSim(fs *pflag.FlagSet, s *scenario.Spec) (*scenario.Built, error) {
	var errs []error
	if err := s.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, policyFlagErrors(fs, s.Policy)...)
	prof, err := s.LoadProfile()
	if err != nil {
		errs = append(errs, err)
	} else if s.Profile != "" {
		for _, c := range []struct {
			flag       string
			have, want string
			set        func()
		}{
			{"gpu", s.GPU, prof.GPU, func() { s.GPU = prof.GPU }},
			{"model", s.Model, prof.Model, func() { s.Model = prof.Model }},
			{"tp", fmt.Sprint(s.TP), fmt.Sprint(prof.TP), func() { s.TP = prof.TP }},
		} {
			switch {
			case strings.EqualFold(c.have, c.want):
			case fs.Changed(c.flag):
				errs = append(errs, fmt.Errorf("--profile %s is for %s %s, but --%s is %s", s.Profile, c.flag, c.want, c.flag, c.have))
			default:
				c.set() // adopt the profile's deployment
			}
		}
	}
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	b, err := s.Build(prof)
	if err != nil {
		var ie *scenario.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, usageError{err}
	}
	return b, nil
}

// policyFlagErrors reports policy flags the user set that the chosen
// policy does not read.
func policyFlagErrors(fs *pflag.FlagSet, name string) []error {
	e, err := policy.Lookup(name)
	if err != nil {
		return nil
	}
	used := map[string]bool{}
	for _, u := range e.Uses {
		used[u] = true
	}
	if used["busy-signal"] {
		used["metrics-lag"] = true
	}
	if e.KVAware {
		used["kv-event-lag"] = true
	}
	var errs []error
	for _, d := range policy.ParamDocs {
		if fs.Changed(d.Flag) && !used[d.Flag] {
			errs = append(errs, fmt.Errorf("--%s has no effect with --policy %s", d.Flag, name))
		}
	}
	for _, flag := range []string{"metrics-lag", "kv-event-lag"} {
		if fs.Changed(flag) && !used[flag] {
			errs = append(errs, fmt.Errorf("--%s has no effect with --policy %s", flag, name))
		}
	}
	return errs
}

func joinNames(names []string) string { return strings.Join(names, ", ") }
