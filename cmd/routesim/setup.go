package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/sim/workload"
)

// simFlags are the flags shared by every command that simulates: the
// workload, the cluster, the engine and the policy. Names follow vLLM and
// Dynamo where they have one.
type simFlags struct {
	Trace     string  `json:"trace"`
	MaxISL    int     `json:"max_isl"`
	Skip      int     `json:"skip"`
	First     int     `json:"first"`
	RateScale float64 `json:"rate_scale"`

	N       int    `json:"n"`
	Policy  string `json:"policy"`
	GPU     string `json:"gpu"`
	Model   string `json:"model"`
	TP      int    `json:"tp"`
	Quant   string `json:"quant"`
	KVDtype string `json:"kv_cache_dtype"`
	Profile string `json:"profile"`

	BlockSize           int     `json:"block_size"`
	MaxModelLen         int     `json:"max_model_len"`
	MaxNumSeqs          int     `json:"max_num_seqs"`
	MaxNumBatchedTokens int     `json:"max_num_batched_tokens"`
	GPUMemUtil          float64 `json:"gpu_memory_utilization"`
	PrefixCaching       bool    `json:"enable_prefix_caching"`

	Seed            uint64 `json:"seed"`
	CheckInvariants bool   `json:"check_invariants"`

	Policies     policy.Params `json:"policy_params"`
	KVEventLag   time.Duration `json:"kv_event_lag"`
	MetricsLag   time.Duration `json:"metrics_lag"`
	Retry        int           `json:"retry"`
	RetryBackoff time.Duration `json:"retry_backoff"`
}

func (f *simFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Trace, "trace", "conversation", "Mooncake JSONL trace: a file (.jsonl or .jsonl.gz) or an embedded name ("+joinNames(workload.EmbeddedNames())+")")
	fs.IntVar(&f.MaxISL, "max-isl", 0, "drop requests with more input tokens (0 = keep all)")
	fs.IntVar(&f.Skip, "skip", 0, "skip the first K requests (after --max-isl)")
	fs.IntVar(&f.First, "first", 0, "keep only the first K requests (after --skip; 0 = all)")
	fs.Float64Var(&f.RateScale, "rate-scale", 1, "multiply the arrival rate (2 = arrivals twice as fast)")
	fs.IntVar(&f.N, "n", 8, "number of workers (one GPU or one TP group each)")
	fs.StringVar(&f.Policy, "policy", "round-robin", "routing policy ("+joinNames(policy.Names())+")")
	fs.StringVar(&f.GPU, "gpu", "A100-SXM4-40GB", "GPU name (see the catalogue)")
	fs.StringVar(&f.Model, "model", "Qwen3-8B", "model name")
	fs.IntVar(&f.TP, "tp", 1, "tensor-parallel degree of a worker")
	fs.StringVar(&f.Quant, "quant", "bf16", "weight format: bf16 or fp8")
	fs.StringVar(&f.KVDtype, "kv-cache-dtype", "auto", "KV cache element type: auto (= bf16) or fp8")
	fs.StringVar(&f.Profile, "profile", "", "step-time profile JSON (default: the built-in one for --gpu/--model/--tp)")
	fs.IntVar(&f.BlockSize, "block-size", 64, "KV block size in tokens (must divide 512)")
	fs.IntVar(&f.MaxModelLen, "max-model-len", 0, "longest ISL+OSL served (0 = the model's max_position_embeddings)")
	fs.IntVar(&f.MaxNumSeqs, "max-num-seqs", 0, "running requests per worker (0 = vLLM's default for the GPU: 256 on A100, 1024 on H100/H200)")
	fs.IntVar(&f.MaxNumBatchedTokens, "max-num-batched-tokens", 0, "tokens per engine step (0 = vLLM's default: 2048 on A100, 8192 on H100/H200)")
	fs.Float64Var(&f.GPUMemUtil, "gpu-memory-utilization", 0.9, "fraction of GPU memory vLLM may use")
	fs.BoolVar(&f.PrefixCaching, "enable-prefix-caching", true, "reuse cached prompt blocks (--enable-prefix-caching=false to disable)")
	fs.Uint64Var(&f.Seed, "seed", 0, "seed of every random stream in the run")
	fs.BoolVar(&f.CheckInvariants, "check-invariants", false, "check KV-cache invariants after every step (slow; for debugging)")
	f.Policies = policy.DefaultParams()
	for _, d := range policy.ParamDocs {
		registerParam(fs, &f.Policies, d)
	}
	fs.DurationVar(&f.KVEventLag, "kv-event-lag", 0, "delay of the workers' KV stored/removed events reaching the router")
	fs.DurationVar(&f.MetricsLag, "metrics-lag", time.Millisecond, "delay of the workers' published KV usage (--busy-signal engine; Dynamo publishes 1 ms after a change)")
	fs.IntVar(&f.Retry, "retry", 0, "client re-sends of a rejected request (0 = none, like AIPerf)")
	fs.DurationVar(&f.RetryBackoff, "retry-backoff", time.Second, "wait before the first re-send; doubled for each further one")
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
	for _, flag := range append(paramFlags(), "metrics-lag", "kv-event-lag") {
		if fs.Changed(flag) && !used[flag] {
			errs = append(errs, fmt.Errorf("--%s has no effect with --policy %s", flag, name))
		}
	}
	return errs
}

func paramFlags() []string {
	var out []string
	for _, d := range policy.ParamDocs {
		out = append(out, d.Flag)
	}
	return out
}

// setup is everything a run needs, built and validated from simFlags.
type setup struct {
	Trace   *workload.Trace
	Work    *sim.Workload
	Config  sim.Config
	Deploy  model.Deployment
	Profile *model.Profile
}

// build validates the flags and loads the inputs, reporting every flag
// problem at once before touching any file.
func (f *simFlags) build(fs *pflag.FlagSet) (*setup, error) {
	var errs []error
	entry, err := policy.Lookup(f.Policy)
	if err != nil {
		errs = append(errs, fmt.Errorf("--policy: %w", err))
	}
	errs = append(errs, policyFlagErrors(fs, f.Policy)...)
	if err := f.Policies.Validate(); err != nil {
		errs = append(errs, err)
	}
	quant, err := model.ParseQuant(f.Quant)
	if err != nil {
		errs = append(errs, fmt.Errorf("--quant: %w", err))
	}
	kvBytes := 2
	switch f.KVDtype {
	case "auto", "bf16":
	case "fp8":
		kvBytes = 1
	default:
		errs = append(errs, fmt.Errorf("--kv-cache-dtype %q: want auto, bf16 or fp8", f.KVDtype))
	}
	filter := workload.Filter{MaxISL: f.MaxISL, Skip: f.Skip, First: f.First, RateScale: f.RateScale}
	if err := filter.Validate(); err != nil {
		errs = append(errs, err)
	}
	if f.RateScale == 0 {
		errs = append(errs, errors.New("--rate-scale must be > 0"))
	}
	prof, err := f.loadProfile(fs)
	if err != nil {
		errs = append(errs, err)
	}
	cat := model.DefaultCatalogue()
	gpu, err := cat.GPU(f.GPU)
	if err != nil {
		errs = append(errs, fmt.Errorf("--gpu: %w", err))
	}
	llm, err := cat.Model(f.Model)
	if err != nil {
		errs = append(errs, fmt.Errorf("--model: %w", err))
	}
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	dep := model.Deployment{GPU: gpu, Model: llm, TP: f.TP, Quant: quant, KVDtypeBytes: kvBytes}
	wc, err := sim.ResolveWorker(dep, sim.EngineFlags{
		BlockSize: f.BlockSize, MaxModelLen: f.MaxModelLen, MaxNumSeqs: f.MaxNumSeqs,
		MaxNumBatchedTokens: f.MaxNumBatchedTokens, GPUMemoryUtilization: f.GPUMemUtil,
		NoPrefixCaching: !f.PrefixCaching,
	})
	if err != nil {
		return nil, usageError{err}
	}
	dep.GPUMemoryUtilization = f.GPUMemUtil
	cfg := sim.Config{Workers: f.N, Worker: wc, Profile: prof, Seed: f.Seed, CheckInvariants: f.CheckInvariants,
		Router: sim.RouterConfig{
			KVAware: entry.KVAware, EngineSignal: f.Policies.BusySignal == "engine",
			KVEventLag: sim.Time(f.KVEventLag), MetricsLag: sim.Time(f.MetricsLag),
			Retries: f.Retry, RetryBackoff: sim.Time(f.RetryBackoff),
		}}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{err}
	}
	raw, err := workload.Open(f.Trace)
	if err != nil {
		return nil, err
	}
	tr, err := raw.Apply(filter)
	if err != nil {
		return nil, err
	}
	wl, err := sim.Prepare(tr, wc.BlockSize)
	if err != nil {
		return nil, err
	}
	return &setup{Trace: tr, Work: wl, Config: cfg, Deploy: dep, Profile: prof}, nil
}

// loadProfile reads --profile, or finds the built-in profile. A profile
// file must describe the GPU, model and TP the flags name.
func (f *simFlags) loadProfile(fs *pflag.FlagSet) (*model.Profile, error) {
	if f.Profile == "" {
		p, err := model.FindProfile(f.GPU, f.Model, f.TP)
		if err != nil {
			return nil, fmt.Errorf("--gpu/--model/--tp: %w", err)
		}
		return p, nil
	}
	file, err := os.Open(f.Profile)
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	defer file.Close()
	p, err := model.ReadProfile(file, f.Profile)
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	for _, c := range []struct {
		flag, have, want string
	}{{"gpu", f.GPU, p.GPU}, {"model", f.Model, p.Model}, {"tp", fmt.Sprint(f.TP), fmt.Sprint(p.TP)}} {
		if c.have == c.want {
			continue
		}
		if fs.Changed(c.flag) {
			return nil, fmt.Errorf("--profile %s is for %s %s, but --%s is %s", f.Profile, c.flag, c.want, c.flag, c.have)
		}
		switch c.flag { // adopt the profile's deployment
		case "gpu":
			f.GPU = p.GPU
		case "model":
			f.Model = p.Model
		case "tp":
			f.TP = p.TP
		}
	}
	return p, nil
}

func joinNames(names []string) string { return strings.Join(names, ", ") }
