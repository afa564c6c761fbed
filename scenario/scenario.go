// Package scenario turns a plain, JSON-serialisable description of a run
// (trace, filters, deployment, engine knobs, policy and its parameters)
// into what sim.Run needs. The CLI's flags and calibration specs are both
// Specs, so a measured run and its re-simulation are built the same way.
//
// A Spec is built once (Spec.Build: the trace read, the engine resolved)
// and run many times: Built.Run(seed) is one run, seeded as a whole — the
// engine, the policy, the workload and any coefficient draws (Run.Bands)
// all take their streams from that one seed — and Run.Exec simulates it.
package scenario

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
	"github.com/routesim/routesim/workload/session"
)

// Spec describes one run. The zero values of the numeric engine knobs mean
// vLLM's defaults; Defaults returns the CLI's defaults.
type Spec struct {
	// Description says what the scenario reproduces (scenario files).
	Description string `json:"description,omitempty"`
	// Workload is "trace" (replay Trace open-loop), "synthetic" (an
	// open-loop stream drawn from Synthetic) or "sessions" (closed-loop
	// chat users described by Sessions).
	Workload  string             `json:"workload"`
	Sessions  session.Config     `json:"sessions"`
	Synthetic workload.Synthetic `json:"synthetic"`

	Trace     string  `json:"trace"`
	MaxISL    int     `json:"max_isl"`
	Skip      int     `json:"skip"`
	First     int     `json:"first"`
	RateScale float64 `json:"rate_scale"`
	// Repeat replays the selected requests this many times back to back,
	// each copy with its own prompts (0 or 1 = once).
	Repeat int `json:"repeat,omitempty"`
	// Stream reads the trace as a run reaches each request instead of
	// holding it (run --stream; workload.Stream).
	Stream bool `json:"-"`

	N      int    `json:"n"`
	Policy string `json:"policy"`
	// GPU and Model are catalogue names, or a GPU file (NAME.json) and a
	// Hugging Face config.json or its folder; in a scenario file, paths
	// are relative to the file's folder.
	GPU     string `json:"gpu"`
	Model   string `json:"model"`
	TP      int    `json:"tp"`
	Quant   string `json:"quant"`
	KVDtype string `json:"kv_cache_dtype"`
	// Profile is a profile file; empty means the default profile for the
	// deployment (model.ProfileFor); kernel-prior its kernel prior, blis
	// its BLIS linear fit.
	Profile string `json:"profile"`

	BlockSize           int     `json:"block_size"`
	MaxModelLen         int     `json:"max_model_len"`
	MaxNumSeqs          int     `json:"max_num_seqs"`
	MaxNumBatchedTokens int     `json:"max_num_batched_tokens"`
	GPUMemUtil          float64 `json:"gpu_memory_utilization"`
	PrefixCaching       bool    `json:"enable_prefix_caching"`
	// VLLMVersion is the vLLM release (model.VLLMReleases; empty = the
	// default, the study's 0.20.1) whose defaults fill the engine fields
	// left zero (batch budgets by GPU, async scheduling) and whose start-up
	// profiling sizes the KV cache. AsyncScheduling is vLLM's
	// --async-scheduling (nil = the release's default: on from 0.14.0);
	// NumGPUBlocksOverride and KVCacheTokens replace the derived KV
	// capacity (vLLM's --num-gpu-blocks-override; the "GPU KV cache size"
	// of a vLLM log). EnforceEager is vLLM's --enforce-eager (no CUDA
	// graphs): it shapes a kernel prior's launch overhead.
	VLLMVersion          string `json:"vllm_version,omitempty"`
	AsyncScheduling      *bool  `json:"async_scheduling,omitempty"`
	NumGPUBlocksOverride int    `json:"num_gpu_blocks_override,omitempty"`
	KVCacheTokens        int    `json:"kv_cache_tokens,omitempty"`
	EnforceEager         bool   `json:"enforce_eager,omitempty"`
	// KVOffloadingSizeGiB is vLLM's --kv-offloading-size with the native
	// backend: GiB of CPU memory per worker for vLLM's CPU KV tier (the
	// OffloadingConnector; 0 = none; sim.HostTierConfig).
	KVOffloadingSizeGiB float64 `json:"kv_offloading_size_gib,omitempty"`
	// LMCacheMaxLocalCPUSize, LMCacheChunkSize and LMCacheWarm are
	// LMCache's CPU tier through vLLM's LMCacheConnectorV1, under LMCache's
	// own names: max_local_cpu_size (GiB per worker; 0 = none),
	// chunk_size (tokens; 0 = 256) and a warm start (the tier holds every
	// request's prompt chunks before the run; sim.LMCacheConfig).
	LMCacheMaxLocalCPUSize float64 `json:"lmcache_max_local_cpu_size,omitempty"`
	LMCacheChunkSize       int     `json:"lmcache_chunk_size,omitempty"`
	LMCacheWarm            bool    `json:"lmcache_warm,omitempty"`
	// KVBMCPUCacheGB and KVBMDiskCacheGB are Dynamo KVBM's host and disk
	// tiers per vLLM worker, in decimal GB (DYN_KVBM_CPU_CACHE_GB,
	// DYN_KVBM_DISK_CACHE_GB; 0 = none; docs/kvbm.md). KVBM is a vLLM KV
	// connector: it excludes kv_offloading_size_gib.
	KVBMCPUCacheGB  float64 `json:"kvbm_cpu_cache_gb,omitempty"`
	KVBMDiskCacheGB float64 `json:"kvbm_disk_cache_gb,omitempty"`
	// KVBMDiskReadGBs and KVBMDiskWriteGBs are the KVBM disk's
	// bandwidths in GB/s (0: a datacenter PCIe Gen4 NVMe drive's,
	// sim.DefaultDiskReadBytesPerSec and sim.DefaultDiskWriteBytesPerSec).
	KVBMDiskReadGBs  float64 `json:"kvbm_disk_read_gb_s,omitempty"`
	KVBMDiskWriteGBs float64 `json:"kvbm_disk_write_gb_s,omitempty"`
	// KVBMKVEvents is KVBM's KV event consolidator mode,
	// DYN_KVBM_KV_EVENTS_CONSOLIDATOR_MODE: "dedup" (empty; the router sees
	// GPU and KVBM blocks as one device tier) or "passthrough" (each tier
	// tagged; Dynamo ≥ 1.2.0, so not with dynamo_version 0.9.0).
	KVBMKVEvents string `json:"kvbm_kv_events,omitempty"`
	// Engine is the serving engine every worker runs: "vllm" (or empty)
	// or "trtllm" (TensorRT-LLM 1.3.0rc14's PyTorch executor, as Dynamo
	// 1.2.0 ships it). For trtllm, max_num_seqs and max_num_batched_tokens
	// are its max_batch_size and max_num_tokens (0 = 2048 and 8192),
	// block_size its tokens_per_block (a scenario file that names the
	// engine and no block size gets 32), enable_prefix_caching its
	// enable_block_reuse; the fields below are its own (zero = its
	// default) and gpu_memory_utilization is not read. vLLM V1 always
	// chunks prefill: enable_chunked_prefill changes nothing there.
	Engine                  string  `json:"engine,omitempty"`
	CapacitySchedulerPolicy string  `json:"capacity_scheduler_policy,omitempty"`
	EnableChunkedPrefill    bool    `json:"enable_chunked_prefill,omitempty"`
	DisableOverlapScheduler bool    `json:"disable_overlap_scheduler,omitempty"`
	FreeGPUMemoryFraction   float64 `json:"free_gpu_memory_fraction,omitempty"`

	Seed            uint64 `json:"seed"`
	CheckInvariants bool   `json:"check_invariants"`
	// WarmupS excludes requests arriving in the first WarmupS seconds
	// from the statistics (they still load the cluster).
	WarmupS float64 `json:"warmup_s,omitempty"`

	Policies     policy.Params `json:"policy_params"`
	KVEventLag   time.Duration `json:"kv_event_lag"`
	MetricsLag   time.Duration `json:"metrics_lag"`
	Retry        int           `json:"retry"`
	RetryBackoff time.Duration `json:"retry_backoff"`
	// RequestTimeoutS is how many seconds a client waits for a full
	// response before it gives up (0 = forever).
	RequestTimeoutS float64 `json:"request_timeout_s,omitempty"`
	// DynamoVersion is the Dynamo release whose router the kv policies
	// model and whose frontend answers refusals (empty = 1.2.0, the
	// study's): every default of policy.ReleaseOf(DynamoVersion).
	DynamoVersion string `json:"dynamo_version,omitempty"`
	// EventPlaneDelay delays the router's load messages to its busy
	// monitor (Dynamo's ActiveLoad over the event plane).
	EventPlaneDelay time.Duration `json:"event_plane_delay,omitempty"`
}

// Defaults is the CLI's default run: the embedded conversation trace on
// eight A100-SXM4-40GB workers serving Qwen3-8B under round-robin.
func Defaults() Spec {
	return Spec{
		Workload: "trace", Trace: "conversation", RateScale: 1, N: 8, Policy: "round-robin",
		GPU: "A100-SXM4-40GB", Model: "Qwen3-8B", TP: 1, Quant: "bf16", KVDtype: "auto",
		BlockSize: 64, GPUMemUtil: 0.9, PrefixCaching: true,
		Policies: policy.DefaultParams(), MetricsLag: time.Millisecond, RetryBackoff: time.Second,
		Sessions: session.DefaultConfig(),
	}
}

// Built is a Spec made runnable. For sessions Work is nil: every run draws
// its own users (ForSeed). The trace itself is not kept: Work holds its
// requests in compact form.
type Built struct {
	spec    Spec
	Work    *sim.Workload
	Config  sim.Config
	Deploy  model.Deployment
	Profile *model.Profile
	Entry   policy.Entry
}

// Validate checks everything that needs no file, reporting every problem.
func (s *Spec) Validate() error {
	var errs []error
	e, perr := policy.Lookup(s.Policy)
	if perr != nil {
		errs = append(errs, inputerr.Wrap("policy", perr))
	}
	if err := s.Policies.Validate(); err != nil {
		errs = append(errs, err)
	} else if perr == nil && s.N >= 1 && s.N <= sim.MaxWorkers {
		if err := e.CheckWorkers(s.Policies, s.N); err != nil {
			errs = append(errs, err) // e.g. a prefix-hash ring too large for n workers
		}
	}
	if _, err := model.ParseQuant(s.Quant); err != nil {
		errs = append(errs, inputerr.Wrap("quant", err))
	}
	if _, err := s.kvBytes(); err != nil {
		errs = append(errs, err)
	}
	if _, err := policy.ReleaseOf(s.DynamoVersion); err != nil {
		errs = append(errs, inputerr.Wrap("dynamo_version", err))
	}
	if err := s.filter().Validate(); err != nil {
		errs = append(errs, err)
	}
	if s.Stream && s.Workload != "trace" && s.Workload != "" {
		errs = append(errs, inputerr.Fieldf("stream", "streams a trace: it has no effect with workload %q", s.Workload))
	}
	switch s.Workload {
	case "trace", "":
	case "sessions":
		if err := s.Sessions.Validate(); err != nil {
			errs = append(errs, err)
		}
	case "synthetic":
		if err := s.Synthetic.Validate(); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, inputerr.Fieldf("workload", "%q: want trace, synthetic or sessions", s.Workload))
	}
	if s.RateScale == 0 {
		errs = append(errs, inputerr.Fieldf("rate_scale", "must be > 0"))
	}
	// A week of simulated time bounds both: past that the nanosecond
	// clock is still exact, and no benchmark runs longer.
	const week = 7 * 24 * 3600
	if !(s.WarmupS >= 0 && s.WarmupS <= week) {
		errs = append(errs, inputerr.Fieldf("warmup_s", "%g must be in [0, %d] seconds", s.WarmupS, week))
	}
	if !(s.RequestTimeoutS >= 0 && s.RequestTimeoutS <= week) {
		errs = append(errs, inputerr.Fieldf("request_timeout_s", "%g must be in [0, %d] (0 = clients wait forever)", s.RequestTimeoutS, week))
	}
	if err := s.checkEngine(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, s.checkDelays()...)
	cat := model.DefaultCatalogue()
	if g, err := cat.LoadGPU(s.GPU); err != nil {
		errs = append(errs, inputerr.Wrap("gpu", err))
	} else if g.File == "" {
		s.GPU = g.Name // an alias ("H100") becomes the catalogue's name
	}
	if _, err := cat.LoadModel(s.Model); err != nil {
		errs = append(errs, inputerr.Wrap("model", err))
	}
	return errors.Join(errs...)
}

// checkEngine runs the engine-level checks that need no catalogue or
// file: the KV block size, the engine's limits, the memory fraction.
func (s *Spec) checkEngine() error {
	var errs []error
	if s.BlockSize != 0 {
		if err := sim.CheckBlockSize(s.BlockSize); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range []struct {
		field  string
		v, max int
	}{{"max_num_seqs", s.MaxNumSeqs, maxNumSeqs}, {"max_num_batched_tokens", s.MaxNumBatchedTokens, maxBatchTokens},
		{"max_model_len", s.MaxModelLen, maxBatchTokens},
		{"num_gpu_blocks_override", s.NumGPUBlocksOverride, model.MaxKVTokens}, {"kv_cache_tokens", s.KVCacheTokens, model.MaxKVTokens}} {
		if c.v < 0 || c.v > c.max {
			errs = append(errs, inputerr.Fieldf(c.field, "%d must be in [0, %d] (0 = vLLM's default)", c.v, c.max))
		}
	}
	errs = append(errs, s.checkEngineKind()...)
	if s.TP < 1 || s.TP > 64 {
		errs = append(errs, inputerr.Fieldf("tp", "%d must be in [1, 64]", s.TP))
	}
	if s.N < 1 || s.N > sim.MaxWorkers {
		errs = append(errs, inputerr.Fieldf("n", "%d must be in [1, %d]", s.N, sim.MaxWorkers))
	}
	if u := s.GPUMemUtil; u != 0 && !(u > 0 && u <= 1) {
		errs = append(errs, inputerr.Fieldf("gpu_memory_utilization", "%g must be in (0, 1]", u))
	}
	return errors.Join(errs...)
}

// checkEngineKind checks the engine's name and that no setting of the
// other engine is given.
func (s *Spec) checkEngineKind() []error {
	kind, err := sim.ParseEngine(s.Engine)
	if err != nil {
		return []error{inputerr.Wrap("engine", err)}
	}
	var errs []error
	if _, err := sim.ParseCapacityPolicy(s.CapacitySchedulerPolicy); err != nil {
		errs = append(errs, inputerr.Wrap("capacity_scheduler_policy", err))
	}
	if f := s.FreeGPUMemoryFraction; f != 0 && !(f > 0 && f <= 1) {
		errs = append(errs, inputerr.Fieldf("free_gpu_memory_fraction", "%g must be in (0, 1]", f))
	}
	if g := s.KVOffloadingSizeGiB; g != 0 && !(g > 0 && g <= sim.MaxKVOffloadingGiB) {
		errs = append(errs, inputerr.Fieldf("kv_offloading_size_gib", "%g must be in (0, %d] GiB (0 = no CPU tier)", g, sim.MaxKVOffloadingGiB))
	}
	errs = append(errs, s.checkLMCache()...)
	errs = append(errs, s.checkKVBM()...)
	if kind == sim.TRTLLM {
		for _, c := range []struct {
			field string
			set   bool
		}{{"vllm_version", s.VLLMVersion != ""}, {"enforce_eager", s.EnforceEager}, {"async_scheduling", s.AsyncScheduling != nil},
			{"kv_offloading_size_gib", s.KVOffloadingSizeGiB != 0}, {"lmcache_max_local_cpu_size", s.LMCacheMaxLocalCPUSize != 0},
			{"kvbm_cpu_cache_gb", s.KVBMCPUCacheGB != 0},
			{"kvbm_disk_cache_gb", s.KVBMDiskCacheGB != 0}, {"kvbm_disk_read_gb_s", s.KVBMDiskReadGBs != 0},
			{"kvbm_disk_write_gb_s", s.KVBMDiskWriteGBs != 0}, {"kvbm_kv_events", s.KVBMKVEvents != ""}} {
			if c.set {
				errs = append(errs, inputerr.Fieldf(c.field, "is vLLM's: it has no effect with `engine` trtllm"))
			}
		}
		return errs
	}
	for _, c := range []struct {
		field string
		set   bool
	}{{"capacity_scheduler_policy", s.CapacitySchedulerPolicy != ""},
		{"disable_overlap_scheduler", s.DisableOverlapScheduler}, {"free_gpu_memory_fraction", s.FreeGPUMemoryFraction != 0}} {
		if c.set {
			errs = append(errs, inputerr.Fieldf(c.field, "is TensorRT-LLM's: it needs `engine` trtllm"))
		}
	}
	return errs
}

// engineFlags are the spec's engine knobs (Validate has checked them).
func (s *Spec) engineFlags() sim.EngineFlags {
	kind, _ := sim.ParseEngine(s.Engine)
	pol, _ := sim.ParseCapacityPolicy(s.CapacitySchedulerPolicy)
	kvbmEvents, _ := sim.ParseKVBMEvents(s.KVBMKVEvents)
	return sim.EngineFlags{
		BlockSize: s.BlockSize, MaxModelLen: s.MaxModelLen, MaxNumSeqs: s.MaxNumSeqs,
		MaxNumBatchedTokens: s.MaxNumBatchedTokens, GPUMemoryUtilization: s.GPUMemUtil,
		NoPrefixCaching: !s.PrefixCaching, VLLMVersion: s.VLLMVersion, AsyncScheduling: s.AsyncScheduling,
		NumGPUBlocksOverride: s.NumGPUBlocksOverride, KVCacheTokens: s.KVCacheTokens, KVOffloadingSizeGiB: s.KVOffloadingSizeGiB,
		LMCacheMaxLocalCPUSizeGiB: s.LMCacheMaxLocalCPUSize, LMCacheChunkSize: s.LMCacheChunkSize, LMCacheWarm: s.LMCacheWarm,
		KVBMCPUCacheGB: s.KVBMCPUCacheGB, KVBMDiskCacheGB: s.KVBMDiskCacheGB,
		KVBMDiskReadGBs: s.KVBMDiskReadGBs, KVBMDiskWriteGBs: s.KVBMDiskWriteGBs, KVBMEvents: kvbmEvents,
		Engine: kind, CapacityPolicy: pol, ChunkedPrefill: kind == sim.TRTLLM && s.EnableChunkedPrefill,
		NoOverlap: s.DisableOverlapScheduler, FreeGPUMemoryFraction: s.FreeGPUMemoryFraction,
	}
}

// EngineKind is the spec's engine (vLLM if its name is bad: Validate
// reports that).
func (s *Spec) EngineKind() sim.EngineKind {
	k, _ := sim.ParseEngine(s.Engine)
	return k
}

// overloadCode is the HTTP status of Dynamo's busy rejections in the
// release version names: 503 up to v1.2, 529 from v1.3 (PR #10941).
func overloadCode(version string) int {
	r, err := policy.ReleaseOf(version)
	if err != nil {
		return 503
	}
	return r.OverloadCode
}

func (s *Spec) kvBytes() (int, error) {
	switch s.KVDtype {
	case "auto", "bf16", "":
		return 2, nil
	case "fp8":
		return 1, nil
	}
	return 0, inputerr.Fieldf("kv_cache_dtype", "%q: want auto, bf16 or fp8", s.KVDtype)
}

func (s *Spec) filter() workload.Filter {
	return workload.Filter{MaxISL: s.MaxISL, Skip: s.Skip, First: s.First, RateScale: s.RateScale, Repeat: s.Repeat}
}

// Deployment resolves the GPU and model: catalogue names, or a GPU file
// and a Hugging Face config (model.Catalogue.LoadGPU, LoadModel).
func (s *Spec) Deployment() (model.Deployment, error) {
	cat := model.DefaultCatalogue()
	gpu, err := cat.LoadGPU(s.GPU)
	if err != nil {
		return model.Deployment{}, err
	}
	llm, err := cat.LoadModel(s.Model)
	if err != nil {
		return model.Deployment{}, err
	}
	quant, err := model.ParseQuant(s.Quant)
	if err != nil {
		return model.Deployment{}, err
	}
	kv, err := s.kvBytes()
	if err != nil {
		return model.Deployment{}, err
	}
	return model.Deployment{GPU: gpu, Model: llm, TP: s.TP, Quant: quant, KVDtypeBytes: kv, GPUMemoryUtilization: s.GPUMemUtil}, nil
}

// LoadProfile reads s.Profile, or picks the built-in profile for the
// deployment (a roofline estimate where none was measured). TensorRT-LLM
// workers take the deployment's TensorRT-LLM fit, or a transfer of one
// (model.TRTLLMProfileFor), where there is one, else its vLLM profile;
// kernel-prior is TensorRT-LLM's kernel prior for them; blis is the
// deployment's BLIS linear fit (model.BLISProfileFor), a comparison that
// no deployment takes by default. A TensorRT-LLM run
// gets a vLLM profile with the dynamo-trtllm stack's own terms
// (model.ForStack); a TensorRT-LLM profile's step times already include
// the executor's host gap, so it runs on that stack as it is.
func (s *Spec) LoadProfile() (*model.Profile, error) {
	p, err := s.loadProfile()
	if err != nil || s.EngineKind() != sim.TRTLLM {
		return p, err
	}
	if p.Engine == model.EngineTRTLLM && p.Stack == "" {
		// Fitted to (or the prior of) TensorRT-LLM: its step base holds the
		// executor's host gap, which the stack would charge again.
		q := *p
		q.Stack = model.StackDynamoTRTLLM
		return &q, nil
	}
	return model.ForStack(p, model.StackDynamoTRTLLM), nil
}

func (s *Spec) loadProfile() (*model.Profile, error) {
	if s.Profile == "" || s.Profile == model.KernelPriorName {
		dep, err := s.Deployment()
		if err != nil {
			return nil, err
		}
		trt := s.EngineKind() == sim.TRTLLM
		if s.Profile == "" {
			if trt {
				if p := model.TRTLLMProfileFor(dep); p != nil {
					return p, nil
				}
			}
			return model.ProfileFor(dep, s.EnforceEager), nil
		}
		if trt {
			p, _, err := model.TRTLLMKernelPrior(dep, model.DefaultCatalogue())
			if err != nil {
				return nil, inputerr.Wrap("profile", fmt.Errorf("%s: %w", s.Profile, err))
			}
			return p, nil
		}
		p, _, err := model.KernelPrior(dep, model.DefaultCatalogue(), s.EnforceEager)
		if err != nil {
			return nil, inputerr.Wrap("profile", fmt.Errorf("%s: %w", s.Profile, err))
		}
		return p, nil
	}
	if s.Profile == model.BLISName {
		dep, err := s.Deployment()
		if err != nil {
			return nil, err
		}
		p, err := model.BLISProfileFor(dep)
		if err != nil {
			return nil, inputerr.Wrap("profile", fmt.Errorf("%s: %w", s.Profile, err))
		}
		return p, nil
	}
	f, err := os.Open(s.Profile)
	if err != nil {
		return nil, inputerr.Wrap("profile", err)
	}
	defer f.Close()
	p, err := model.ReadProfile(f, s.Profile)
	if err != nil {
		return nil, inputerr.Wrap("profile", err)
	}
	return p, nil
}

// Build validates s, loads its trace and resolves the engine configuration.
// prof, if not nil, replaces the spec's profile (calibration re-simulates
// with candidate profiles).
func (s *Spec) Build(prof *model.Profile) (*Built, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var err error
	if prof == nil {
		if prof, err = s.LoadProfile(); err != nil {
			return nil, err
		}
	}
	dep, err := s.Deployment()
	if err != nil {
		return nil, err
	}
	if err := prof.CheckPhysical(dep); err != nil {
		return nil, inputerr.Wrap("profile", err)
	}
	entry, _ := policy.Lookup(s.Policy)
	wc, err := sim.ResolveWorker(dep, s.engineFlags())
	if err != nil {
		return nil, err
	}
	needs := entry.Needs(s.policyParams())
	cfg := sim.Config{Pools: sim.Single(s.N, wc, prof), Seed: s.Seed, CheckInvariants: s.CheckInvariants,
		Router: sim.RouterConfig{
			KVAware: needs.KV, EngineSignal: needs.EngineMetrics, MetricsScrapePeriod: sim.Time(needs.ScrapePeriod),
			KVEventLag: sim.Time(s.KVEventLag), MetricsLag: sim.Time(s.MetricsLag), EventPlaneDelay: sim.Time(s.EventPlaneDelay),
			Retries: s.Retry, RetryBackoff: sim.Time(s.RetryBackoff), Timeout: clockTime(s.RequestTimeoutS),
			OverloadCode: overloadCode(s.DynamoVersion),
		}}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	built := &Built{Config: cfg, Deploy: dep, Profile: prof, Entry: entry, spec: *s}
	if s.Workload == "sessions" {
		return built, nil
	}
	if s.Stream {
		if built.Work, err = workload.Stream(s.Trace, s.filter(), wc.BlockSize); err != nil {
			return nil, &InputError{err}
		}
		return built, nil
	}
	var tr *workload.Trace
	if s.Workload == "synthetic" {
		built.Work, err = s.synthetic(s.Seed, wc.BlockSize)
		return built, err
	}
	if tr, err = workload.Read(s.Trace, s.filter()); err != nil {
		return nil, &InputError{err}
	}
	wl, err := workload.Prepare(tr, wc.BlockSize)
	if err != nil {
		return nil, err
	}
	built.Work = wl
	return built, nil
}

// synthetic draws the synthetic stream of seed (as vllm bench serve's
// --seed draws its random dataset): every policy of a sweep point sees
// the same stream (common random numbers), and each seed its own.
func (s *Spec) synthetic(seed uint64, blockSize int) (*sim.Workload, error) {
	tr, err := s.Synthetic.Generate(sim.Stream(seed, "workload")).Apply(s.filter())
	if err != nil {
		return nil, &InputError{err}
	}
	return workload.Prepare(tr, blockSize)
}

// ClosedLoop is a run's closed-loop clients: sim.FollowUp plus a
// one-line account of them for summaries.
type ClosedLoop interface {
	sim.FollowUp
	Report() string
}

// ForSeed returns the workload of one run with the given seed, and its
// closed-loop clients, if any (fresh per run: they hold state): session
// users, or a trace's sessions; concurrency > 0 overrides the spec's
// number of users. A synthetic stream is the seed's own draw; a trace is
// the same for every seed.
func (b *Built) ForSeed(seed uint64, concurrency int) (*sim.Workload, ClosedLoop, error) {
	if b.spec.Workload == "synthetic" && seed != b.spec.Seed {
		wl, err := b.spec.synthetic(seed, b.Config.Front().Worker.BlockSize)
		return wl, nil, err
	}
	if b.spec.Workload != "sessions" {
		if b.Work != nil && session.HasSessions(b.Work) {
			r, wl := session.NewReplay(b.Work)
			return wl, r, nil
		}
		return b.Work, nil, nil
	}
	cfg := b.spec.Sessions
	if concurrency > 0 {
		cfg.Concurrency = concurrency
	}
	cfg.Validate() // fills defaults; Build validated it
	pop, wl := session.New(cfg, b.Config.Front().Worker.BlockSize, seed)
	return wl, pop, nil
}

// MemoryUsedBytes is the memory.used nvidia-smi would report for each of
// b's workers (the simulated NVML's, and AIPerf's telemetry).
func (b *Built) MemoryUsedBytes() int64 {
	w := b.Config.Front().Worker
	return b.Deploy.MemoryUsedBytes(sim.MemoryEngine(b.spec.engineFlags(), w), w.BlockSize)
}

// InputError wraps a problem with an input file (as opposed to a bad
// setting), so callers can tell the two apart.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// policyParams are the spec's policy parameters with its Dynamo release.
func (s *Spec) policyParams() policy.Params {
	p := s.Policies
	p.DynamoVersion = s.DynamoVersion
	return p
}
