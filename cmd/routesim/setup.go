package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
	"github.com/routesim/routesim/workload/session"
)

// registerSim binds the flags every simulating command shares to s, which
// must hold scenario.Defaults(). Names follow vLLM and Dynamo.
func registerSim(fs *pflag.FlagSet, s *scenario.Spec) {
	fs.StringVar(&s.Workload, "workload", s.Workload, "trace (replay --trace), synthetic (open-loop stream, see --rate) or sessions (closed-loop chat users, see --concurrency)")
	registerSessions(fs, &s.Sessions)
	registerSynthetic(fs, &s.Synthetic)
	fs.StringVar(&s.Trace, "trace", s.Trace, "Mooncake JSONL trace: a file (.jsonl or .jsonl.gz) or an embedded name ("+joinNames(workload.EmbeddedNames())+")")
	fs.IntVar(&s.MaxISL, "max-isl", s.MaxISL, "drop requests with more input tokens (0 = keep all)")
	fs.IntVar(&s.Skip, "skip", s.Skip, "skip the first K requests (after --max-isl)")
	fs.IntVar(&s.Repeat, "repeat", s.Repeat, "replay the selected requests K times back to back, each copy with its own prompts and sessions (a long steady workload from a short trace; 0 = once)")
	fs.IntVar(&s.First, "first", s.First, "keep only the first K requests (after --skip; 0 = all)")
	fs.Float64Var(&s.RateScale, "rate-scale", s.RateScale, "multiply the arrival rate (2 = arrivals twice as fast)")
	fs.IntVar(&s.N, "n", s.N, "number of workers (one GPU or one TP group each)")
	fs.StringVar(&s.Policy, "policy", s.Policy, "routing policy ("+joinNames(policy.Names())+"; see routesim policies)")
	fs.StringVar(&s.GPU, "gpu", s.GPU, "GPU: a catalogue name (see routesim profiles) or a GPU file NAME.json with a datasheet's figures (see routesim profiles --gpu FILE)")
	fs.StringVar(&s.Model, "model", s.Model, "model: a catalogue name, or a Hugging Face config.json or the folder holding it")
	fs.IntVar(&s.TP, "tp", s.TP, "tensor-parallel degree of a worker")
	fs.StringVar(&s.Quant, "quant", s.Quant, "weight format: bf16 or fp8")
	fs.StringVar(&s.KVDtype, "kv-cache-dtype", s.KVDtype, "KV cache element type: auto (= bf16) or fp8")
	fs.StringVar(&s.Profile, "profile", s.Profile, "step-time profile JSON, or kernel-prior, or blis (the deployment's BLIS linear fit, for comparison; routesim profiles lists them); default: the deployment's measured kernel profile, else a transfer of a measured one, else its kernel prior")
	fs.StringVar(&s.Engine, "engine", s.Engine, "serving engine of every worker: vllm (vLLM V1) or trtllm (TensorRT-LLM 1.3.0rc14's PyTorch executor, as Dynamo 1.2.0 ships it; step times stay the deployment's profile's)")
	fs.Lookup("engine").DefValue = "vllm"
	fs.IntVar(&s.BlockSize, "block-size", s.BlockSize, "KV block size in tokens (must divide 512; 64 for vllm, 32 — TensorRT-LLM's tokens_per_block — for --engine trtllm unless set)")
	fs.IntVar(&s.MaxModelLen, "max-model-len", s.MaxModelLen, "longest ISL+OSL served (0 = the model's max_position_embeddings)")
	fs.IntVar(&s.MaxNumSeqs, "max-num-seqs", s.MaxNumSeqs, "batch size: requests per engine step (0 = the engine's default: the --vllm-version release's rule on the GPU's memory and name, 1024 from 70 GiB except A100s from 0.9.0, else 256; TensorRT-LLM's max_batch_size 2048)")
	fs.IntVar(&s.MaxNumBatchedTokens, "max-num-batched-tokens", s.MaxNumBatchedTokens, "token budget: tokens per engine step (0 = the engine's default: the --vllm-version release's rule, 8192 from 70 GiB except A100s from 0.9.0, else 2048; TensorRT-LLM's max_num_tokens 8192)")
	fs.Float64Var(&s.GPUMemUtil, "gpu-memory-utilization", s.GPUMemUtil, "fraction of GPU memory vLLM may use (vllm; trtllm reads --free-gpu-memory-fraction)")
	fs.BoolVar(&s.PrefixCaching, "enable-prefix-caching", s.PrefixCaching, "reuse cached prompt blocks (TensorRT-LLM's enable_block_reuse; --enable-prefix-caching=false to disable)")
	fs.StringVar(&s.CapacitySchedulerPolicy, "capacity-scheduler-policy", s.CapacitySchedulerPolicy, "trtllm: GUARANTEED_NO_EVICT (the default: admit a request only if its prompt + max_tokens fit beside every running request's worst case), MAX_UTILIZATION (admit on the next step's blocks, pause the newest request when short) or STATIC_BATCH (admit only while nothing generates)")
	fs.BoolVar(&s.EnableChunkedPrefill, "enable-chunked-prefill", s.EnableChunkedPrefill, "split prompts over steps: vllm always does; trtllm does not by default (a prompt runs whole in one step, and one longer than --max-num-tokens is refused)")
	fs.BoolVar(&s.DisableOverlapScheduler, "disable-overlap-scheduler", s.DisableOverlapScheduler, "trtllm: schedule each step after the last one ended (by default the next step is chosen as the current one starts, so a request reaching a busy worker waits one more step)")
	fs.Float64Var(&s.FreeGPUMemoryFraction, "free-gpu-memory-fraction", s.FreeGPUMemoryFraction, "trtllm: share of the memory left after weights and activations that the KV cache takes (0 = TensorRT-LLM's 0.9)")
	fs.StringVar(&s.VLLMVersion, "vllm-version", s.VLLMVersion, "vLLM release whose defaults the workers take: batch budgets by GPU memory and name, async scheduling (on from 0.14.0), start-up memory profiling (before 0.17 activations reserved ≈2.5× more); empty = "+model.DefaultVLLMVersion+", the 8×A100 study's; "+model.VLLMReleases()[0]+" to "+model.VLLMReleases()[len(model.VLLMReleases())-1]+" (see docs/readings/vllm-releases.md)")
	fs.Var(optBool{&s.AsyncScheduling}, "async-scheduling", "vLLM: plan each step while the one before runs, so a request reaching a busy worker waits one more step (default: the --vllm-version release's, on from 0.14.0; --async-scheduling=false to disable)")
	fs.Lookup("async-scheduling").NoOptDefVal = "true"
	fs.IntVar(&s.NumGPUBlocksOverride, "num-gpu-blocks-override", s.NumGPUBlocksOverride, "KV capacity in blocks of --block-size, as vLLM's flag (0 = derive it from memory)")
	fs.IntVar(&s.KVCacheTokens, "kv-cache-tokens", s.KVCacheTokens, "KV capacity in tokens: the \"GPU KV cache size: N tokens\" your vLLM log printed (0 = derive it)")
	fs.Float64Var(&s.KVOffloadingSizeGiB, "kv-offloading-size", s.KVOffloadingSizeGiB, "vLLM's CPU KV offloading (native backend, the OffloadingConnector): GiB of host memory per worker; blocks the GPU fills are copied there and reloaded over PCIe instead of recomputed (0 = none; see docs/readings/kv-tiers.md)")
	fs.Float64Var(&s.LMCacheMaxLocalCPUSize, "lmcache-max-local-cpu-size", s.LMCacheMaxLocalCPUSize, "LMCache's CPU tier through vLLM's LMCacheConnectorV1 (spring-2025 LMCache): GiB of host memory per worker (LMCache's max_local_cpu_size); prompt chunks are stored after the step that computes them and loaded synchronously inside the step that admits a request, both over PCIe; invisible to routers (0 = none; not with --kv-offloading-size; see docs/readings/lmcache.md)")
	fs.IntVar(&s.LMCacheChunkSize, "lmcache-chunk-size", s.LMCacheChunkSize, "LMCache's chunk_size in tokens, a multiple of --block-size (0 = LMCache's 256)")
	fs.BoolVar(&s.LMCacheWarm, "lmcache-warm", s.LMCacheWarm, "start with the LMCache tier holding every request's prompt chunks, stored in trace order (a warm-up pass of the same users before the run, as LMBench's run script sends)")
	fs.Float64Var(&s.KVBMCPUCacheGB, "kvbm-cpu-cache-gb", s.KVBMCPUCacheGB, "Dynamo KVBM (its vLLM connector): GB (10⁹ bytes) of host memory per worker, DYN_KVBM_CPU_CACHE_GB; every block a step computes is written there and reloaded over PCIe instead of recomputed (0 = none; excludes --kv-offloading-size; see docs/kvbm.md)")
	fs.Float64Var(&s.KVBMDiskCacheGB, "kvbm-disk-cache-gb", s.KVBMDiskCacheGB, "Dynamo KVBM: GB of local disk per worker, DYN_KVBM_DISK_CACHE_GB, below --kvbm-cpu-cache-gb; host blocks seen twice are written there (0 = none; see docs/kvbm.md)")
	fs.Float64Var(&s.KVBMDiskReadGBs, "kvbm-disk-read-gb-s", s.KVBMDiskReadGBs, "Dynamo KVBM: the disk's read bandwidth, GB/s (0 = 6.8, a datacenter PCIe Gen4 NVMe drive's; see docs/kvbm.md)")
	fs.Float64Var(&s.KVBMDiskWriteGBs, "kvbm-disk-write-gb-s", s.KVBMDiskWriteGBs, "Dynamo KVBM: the disk's write bandwidth, GB/s (0 = 5.6, a datacenter PCIe Gen4 NVMe drive's; see docs/kvbm.md)")
	fs.StringVar(&s.KVBMKVEvents, "kvbm-kv-events", s.KVBMKVEvents, "Dynamo KVBM's KV event consolidator, DYN_KVBM_KV_EVENTS_CONSOLIDATOR_MODE: dedup (default: the router sees GPU and KVBM blocks as GPU blocks) or passthrough (Dynamo ≥ 1.2.0: host blocks tagged CPU_TIER1, disk CPU_TIER2, which the router reads into its host and disk indexes; see docs/kvbm.md)")
	fs.BoolVar(&s.EnforceEager, "enforce-eager", s.EnforceEager, "vLLM's --enforce-eager (no CUDA graphs): a kernel prior then carries eager-mode launch gaps")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "seed of every random stream in the run")
	fs.Float64Var(&s.WarmupS, "warmup", s.WarmupS, "seconds at the start whose arrivals are left out of the statistics (they still load the cluster)")
	fs.BoolVar(&s.CheckInvariants, "check-invariants", s.CheckInvariants, "check KV-cache invariants after every step (slow; for debugging)")
	for _, d := range policy.ParamList {
		registerParam(fs, &s.Policies, d)
	}
	fs.DurationVar(&s.KVEventLag, "kv-event-lag", s.KVEventLag, "delay of the workers' KV stored/removed events reaching the router")
	fs.DurationVar(&s.MetricsLag, "metrics-lag", s.MetricsLag, "delay of the workers' published KV usage and queues (Dynamo's busy monitor reads kv_used_blocks, which matters below an --active-decode-blocks-threshold of 1; scraped-metrics policies such as llm-d also read them only every --refresh-metrics-interval; Dynamo publishes 1 ms after a change)")
	fs.DurationVar(&s.EventPlaneDelay, "event-plane-delay", s.EventPlaneDelay, "delay of the router's own load messages (Dynamo's ActiveLoad after every booking, first token and release) reaching its busy monitor")
	fs.IntVar(&s.Retry, "retry", s.Retry, "client re-sends of a rejected request (0 = none, like AIPerf)")
	fs.DurationVar(&s.RetryBackoff, "retry-backoff", s.RetryBackoff, "wait before the first re-send; doubled for each further one")
	fs.StringVar(&s.DynamoVersion, "dynamo-version", s.DynamoVersion, "Dynamo release whose KV router --router-mode kv models, with every default (router queue, busy monitor, how busy workers are refused, status code): 0.9.0, 1.2.0 (the default, the 8×A100 study's) or 1.4.0; see routesim policies --dynamo-version V")
	registerClientFlags(fs)
	fs.Float64Var(&s.RequestTimeoutS, "request-timeout-seconds", s.RequestTimeoutS, "seconds a client waits for the full response before it gives up and the engine aborts the request (AIPerf's flag; inference-perf's aiohttp client: 300); 0 = forever")
}

// registerParam adds the flag for one policy parameter, bound to its field.
func registerParam(fs *pflag.FlagSet, p *policy.Params, d policy.Param) {
	switch {
	case d.Float != nil:
		fs.Float64Var(d.Float(p), d.Flag, *d.Float(p), d.Help)
	case d.Int != nil:
		fs.IntVar(d.Int(p), d.Flag, *d.Int(p), d.Help)
	default:
		fs.StringVar(d.String(p), d.Flag, *d.String(p), d.Help)
	}
}

// applyEngineDefaults gives a run whose engine --engine names its
// engine's KV block size, unless --block-size or the --scenario file src
// sets one (a file that names the engine got it when it was read): the
// CLI's default of 64 is vLLM's (the study's), TensorRT-LLM's is 32.
func applyEngineDefaults(fs *pflag.FlagSet, src *scenario.Source, s *scenario.Spec) {
	if fs.Changed("engine") && !fs.Changed("block-size") && src.Line("block_size") == 0 {
		s.BlockSize = sim.DefaultBlockSize(s.EngineKind())
	}
}

// engineTag marks a model name in titles with a TensorRT-LLM run's engine
// (nothing for vLLM, the default).
func engineTag(s *scenario.Spec) string {
	if s.EngineKind() == sim.TRTLLM {
		return " [trtllm]"
	}
	return ""
}

// engineFlagErrors reports vLLM's memory flag set for a TensorRT-LLM run
// (the spec cannot tell its default from a choice; the other engine
// settings are the spec's to check).
func engineFlagErrors(fs *pflag.FlagSet, s *scenario.Spec) []error {
	if s.EngineKind() == sim.TRTLLM && fs.Lookup("gpu-memory-utilization") != nil && fs.Changed("gpu-memory-utilization") {
		return []error{fmt.Errorf("--gpu-memory-utilization is vLLM's: --engine trtllm sizes its KV cache by --free-gpu-memory-fraction")}
	}
	return nil
}

// buildSim validates the flags (all problems at once), reconciles a
// --profile file with the deployment flags, and builds the run.
func buildSim(fs *pflag.FlagSet, s *scenario.Spec) (*scenario.Built, error) {
	var errs []error
	verr := s.Validate()
	if verr != nil {
		errs = append(errs, verr)
	}
	errs = append(errs, engineFlagErrors(fs, s)...)
	errs = append(errs, policyFlagErrors(fs, s)...)
	errs = append(errs, workloadFlagErrors(fs, s.Workload)...)
	var prof *model.Profile
	if verr == nil { // a profile needs a valid deployment; its errors would repeat the flags'
		var perrs []error
		prof, perrs = loadProfile(fs, s)
		errs = append(errs, perrs...)
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

// addRunFlags adds run's flags, bound to base, to fs, except those named
// (the command's own axes, which it declares itself).
func addRunFlags(fs *pflag.FlagSet, base *scenario.Spec, except ...string) {
	tmp := pflag.NewFlagSet("", pflag.ContinueOnError)
	registerSim(tmp, base)
	tmp.VisitAll(func(f *pflag.Flag) {
		if !slices.Contains(except, f.Name) {
			fs.AddFlag(f)
		}
	})
}

// loadProfile loads the run's profile and reconciles it with the
// deployment flags: a --profile adopts its GPU, model and TP unless the user
// set a different one (an error). run and sweep both go through it.
func loadProfile(fs *pflag.FlagSet, s *scenario.Spec) (*model.Profile, []error) {
	prof, err := s.LoadProfile()
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	if s.Profile != "" {
		gpu, llm := s.GPU, s.Model
		if dep, err := s.Deployment(); err == nil {
			gpu, llm = deploymentName(gpu, dep.GPU.Name, dep.GPU.File), deploymentName(llm, dep.Model.Name, dep.Model.File)
		}
		for _, c := range []struct {
			flag       string
			have, want string
			set        func()
		}{
			{"gpu", gpu, prof.GPU, func() { s.GPU = prof.GPU }},
			{"model", llm, prof.Model, func() { s.Model = prof.Model }},
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
	return prof, errs
}

// deploymentName is the name a --profile must carry for a --gpu or
// --model argument: a file's resolved name, else the argument itself.
func deploymentName(arg, resolved, file string) string {
	if file != "" {
		return resolved
	}
	return arg
}

// policyFlagErrors reports policy flags the user set that the chosen
// policy does not read.
func policyFlagErrors(fs *pflag.FlagSet, s *scenario.Spec) []error {
	return policiesFlagErrors(fs.Changed, s, []string{s.Policy})
}

// workloadFlags are the flags only one workload reads: the trace filters,
// and whatever registerSessions and registerSynthetic bind.
var workloadFlags = map[string][]string{
	"trace":     {"trace", "max-isl", "skip", "first", "repeat"},
	"sessions":  flagNames(func(fs *pflag.FlagSet) { registerSessions(fs, &session.Config{}) }),
	"synthetic": flagNames(func(fs *pflag.FlagSet) { registerSynthetic(fs, &workload.Synthetic{}) }),
}

// flagNames lists the flags register binds.
func flagNames(register func(*pflag.FlagSet)) []string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	register(fs)
	var out []string
	fs.VisitAll(func(f *pflag.Flag) { out = append(out, f.Name) })
	return out
}

// workloadFlagErrors reports flags the user set that the chosen workload
// does not read (--rate-scale is read by trace and synthetic workloads).
func workloadFlagErrors(fs *pflag.FlagSet, workload string, except ...string) []error {
	if workload == "" {
		workload = "trace"
	}
	var errs []error
	for w, flags := range workloadFlags {
		if w == workload {
			continue
		}
		for _, f := range flags {
			if !slices.Contains(except, f) && fs.Lookup(f) != nil && fs.Changed(f) {
				errs = append(errs, fmt.Errorf("--%s has no effect with --workload %s (it belongs to --workload %s)", f, workload, w))
			}
		}
	}
	if workload == "sessions" && fs.Lookup("rate-scale") != nil && fs.Changed("rate-scale") {
		errs = append(errs, fmt.Errorf("--rate-scale has no effect with --workload sessions (load is --concurrency)"))
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errs
}

func joinNames(names []string) string { return strings.Join(names, ", ") }

// registerSessions binds the closed-loop session flags (--workload sessions).
func registerSessions(fs *pflag.FlagSet, c *session.Config) {
	fs.IntVar(&c.Concurrency, "concurrency", c.Concurrency, "sessions: concurrent users, each with one turn in flight at most")
	fs.IntVar(&c.Sessions, "sessions", c.Sessions, "sessions: conversations to run in all (0 = until --duration)")
	fs.Float64Var(&c.DurationS, "duration", c.DurationS, "sessions: seconds after which no turn starts (0 = until --sessions)")
	fs.Var(&turnsValue{c}, "turns", "sessions: turns per conversation, MIN..MAX (default 3..5)")
	fs.Float64Var(&c.ThinkS, "think-time", c.ThinkS, "sessions: mean seconds between an answer and the next turn, exponential (default 1)")
	fs.IntVar(&c.SystemPrompts, "system-prompts", c.SystemPrompts, "sessions: pool of shared system prompts (default 1)")
	fs.IntVar(&c.SystemTokens, "system-tokens", c.SystemTokens, "sessions: tokens per system prompt (0 = none)")
	fs.IntVar(&c.Starters, "starters", c.Starters, "sessions: pool of conversation starters (default 10)")
	fs.IntVar(&c.StarterTokens, "starter-tokens", c.StarterTokens, "sessions: tokens per conversation starter (0 = none: a conversation opens with new input)")
	fs.Float64Var(&c.NewTokens, "new-tokens", c.NewTokens, "sessions: mean new input tokens per later turn, lognormal (default 200)")
	fs.Float64Var(&c.NewCV, "new-cv", c.NewCV, "sessions: coefficient of variation of new input (default 0.5)")
	fs.Float64Var(&c.OutputTokens, "output-tokens", c.OutputTokens, "sessions: mean answer tokens, lognormal (default 300)")
	fs.Float64Var(&c.OutputCV, "output-cv", c.OutputCV, "sessions: coefficient of variation of answers (default 0.5)")
}

// turnsValue parses --turns MIN..MAX (or N).
type turnsValue struct{ c *session.Config }

func (v *turnsValue) String() string {
	if v.c == nil || v.c.TurnsMin == 0 {
		return ""
	}
	return fmt.Sprintf("%d..%d", v.c.TurnsMin, v.c.TurnsMax)
}

func (v *turnsValue) Set(s string) error {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || a < 1 || b < a {
		return fmt.Errorf("want MIN..MAX with 1 ≤ MIN ≤ MAX, got %q", s)
	}
	v.c.TurnsMin, v.c.TurnsMax = a, b
	return nil
}

func (v *turnsValue) Type() string { return "range" }

// scenarioBase returns base, or the --scenario file in args applied over
// it, before the flags are parsed (flags then override the file), and
// where the file sets each field (nil without a file): see located.
func scenarioBase(args []string, base scenario.Spec) (scenario.Spec, *scenario.Source, error) {
	for i, a := range args {
		path := ""
		switch {
		case a == "--scenario" && i+1 < len(args):
			path = args[i+1]
		case strings.HasPrefix(a, "--scenario="):
			path = strings.TrimPrefix(a, "--scenario=")
		default:
			continue
		}
		s, src, err := scenario.LoadSource(path, base)
		if err != nil {
			return base, nil, fmt.Errorf("--scenario: %w", err)
		}
		return s, src, nil
	}
	return base, nil, nil
}

// registerSynthetic binds the open-loop generator's flags (--workload synthetic).
func registerSynthetic(fs *pflag.FlagSet, y *workload.Synthetic) {
	fs.IntVar(&y.Requests, "requests", y.Requests, "synthetic: number of requests")
	fs.Float64Var(&y.RatePerS, "rate", y.RatePerS, "synthetic: mean arrivals per second (--rate-scale multiplies it)")
	fs.StringVar(&y.Arrival, "arrival", y.Arrival, "synthetic: poisson or gamma arrivals (default poisson)")
	fs.Float64Var(&y.ArrivalCV, "arrival-cv", y.ArrivalCV, "synthetic: gamma inter-arrival CV (default 2)")
	fs.Float64Var(&y.ISLMean, "isl-mean", y.ISLMean, "synthetic: mean input tokens after the shared prefix, lognormal (default 2000)")
	fs.Float64Var(&y.ISLCV, "isl-cv", y.ISLCV, "synthetic: input length CV (default 0.5)")
	fs.Float64Var(&y.OSLMean, "osl-mean", y.OSLMean, "synthetic: mean output tokens, lognormal (default 200)")
	fs.Float64Var(&y.OSLCV, "osl-cv", y.OSLCV, "synthetic: output length CV (default 0.5)")
	fs.IntVar(&y.PrefixGroups, "prefix-groups", y.PrefixGroups, "synthetic: number of shared prompt prefixes (0 = none)")
	fs.IntVar(&y.PrefixTokens, "prefix-tokens", y.PrefixTokens, "synthetic: tokens of each shared prefix")
}

// optBool is a boolean flag that can also be left unset (nil: the
// engine's default), for settings whose default depends on others.
type optBool struct{ p **bool }

func (o optBool) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatBool(**o.p)
}

func (o optBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*o.p = &b
	return nil
}

func (o optBool) Type() string { return "bool" }
