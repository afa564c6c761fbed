package sim

import (
	"errors"
	"fmt"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
)

// Config is one run's setup. Build each pool's WorkerConfig with
// ResolveWorker.
type Config struct {
	// Pools are the groups of workers, each behind its own router; the
	// first workers' ids run through the pools in order (pool 0's are
	// 0..N₀−1), workers that join later take the next ids. Most runs have
	// one aggregated pool (Single).
	Pools []PoolConfig
	// Decider decides each request's path through the pools; nil sends
	// every request through pool 0 (one hop).
	Decider Decider
	// Membership lists the workers that join and leave during the run
	// (MemberChange), in any order; nil = a fixed membership.
	Membership []MemberChange
	// Seed drives every random stream of the run (service noise, router
	// tie-breaks); the same seed and inputs give identical results.
	Seed uint64
	// CheckInvariants runs the expensive KV consistency checks after every
	// step (conservation and time order are always checked).
	CheckInvariants bool
	// StepByStep handles every engine step as its own event. By default a
	// worker whose batch only decodes takes its steps up to the next change
	// as one event (see decodeRun), with the same results, faster; tests
	// compare the two.
	StepByStep bool
	// Router configures the router stage around the policy.
	Router RouterConfig
	// NVML configures the simulated GPU sampler.
	NVML NVMLConfig
	// Observer, if set, is told about every step (tests, utilisation
	// sampling). nil means no one listens.
	Observer StepObserver
	// Decisions, if set, is told about every routing decision.
	Decisions DecisionObserver
	// FollowUp, if set, adds requests during the run: closed-loop clients
	// whose next request depends on when their previous one ended. It has
	// per-run state, so each run needs its own.
	FollowUp FollowUp
	// Cancel, if set, stops the run with ErrCancelled soon after it is
	// closed (runs in parallel whose result is no longer wanted: another
	// failed). It never changes the result of a run that finishes.
	Cancel <-chan struct{}
	// Progress, if set, is called every few thousand events with the
	// simulated time and the number of requests ended and recorded so
	// far (a progress display). It never changes the result.
	Progress func(now Time, ended int)
}

// PoolConfig is a group of identical workers (same engine configuration
// and step-time profile) and the router in front of them.
type PoolConfig struct {
	Role    Role
	N       int // workers in the pool at the start (each one GPU or TP group)
	Worker  WorkerConfig
	Profile *model.Profile
	// Policy routes among the pool's workers; nil for pool 0 means the
	// policy given to Run. Every other pool needs its own (a policy keeps
	// per-run state).
	Policy policy.Policy
	// Router, if set, replaces Config.Router's router-stage settings for
	// this pool (block bookkeeping, engine metrics, lags); the client's
	// settings (retries, timeout, overload code) stay Config.Router's.
	Router *RouterConfig
}

// Single is the configuration of n identical aggregated workers.
func Single(n int, w WorkerConfig, p *model.Profile) []PoolConfig {
	return []PoolConfig{{Role: RoleAggregated, N: n, Worker: w, Profile: p}}
}

// NumWorkers is the number of workers over all pools.
func (c *Config) NumWorkers() int {
	n := 0
	for _, p := range c.Pools {
		n += p.N
	}
	return n
}

// Front is the pool whose settings the cluster's front applies to every
// request: the frontend delay (its profile) and the max-model-len check.
// It is the first pool (the frontend is shared by the pools, as Dynamo's).
func (c *Config) Front() *PoolConfig { return &c.Pools[0] }

// WithN returns c with its first pool resized to n workers (a sweep's
// cluster-size axis); the pools are copied, so c is unchanged.
func (c Config) WithN(n int) Config {
	c.Pools = append([]PoolConfig(nil), c.Pools...)
	c.Pools[0].N = n
	return c
}

// WithProfile returns c with every pool running profile p (a calibration
// candidate, a posterior draw); the pools are copied.
func (c Config) WithProfile(p *model.Profile) Config {
	c.Pools = append([]PoolConfig(nil), c.Pools...)
	for i := range c.Pools {
		c.Pools[i].Profile = p
	}
	return c
}

// FollowUp is a closed-loop client population.
type FollowUp interface {
	// Ended reports that job j ended at time at with status s. It returns
	// the same client's next job (Arrival ≥ at, blocks already hashed for
	// the workers' block size), or nil.
	Ended(j *Job, s Status, at Time) *Job
}

// DecisionObserver watches routing decisions (--trace-decisions).
type DecisionObserver interface {
	// Decision reports the policy's answer for attempt (1-based) of request
	// id at time at.
	Decision(at Time, id, attempt int, d policy.Decision)
}

// StepObserver watches engine steps as they are scheduled.
type StepObserver interface {
	// Step reports a step of worker w running [start, start+dur): its batch,
	// the number of requests in it, and the KV blocks in use during it.
	Step(w int, start, dur Time, b model.Batch, seqs, kvUsed int)
}

// MaxWorkers is the most workers a run may have.
const MaxWorkers = 4096

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(c.Pools) == 0 {
		bad("no worker pools")
	}
	if n := c.NumWorkers(); n < 1 || n > MaxWorkers {
		errs = append(errs, inputerr.Fieldf("n", "%d must be in [1, %d]", n, MaxWorkers))
	}
	for i := range c.Pools {
		pool := &c.Pools[i]
		if pool.N < 1 {
			bad("pool %d: %d workers (want ≥ 1)", i, pool.N)
		}
		if int(pool.Role) >= len(roleNames) {
			bad("pool %d: unknown role %d", i, pool.Role)
		}
		if i > 0 && pool.Policy == nil {
			bad("pool %d: no policy (only pool 0 may use Run's)", i)
		}
		if i > 0 && pool.Worker.BlockSize != c.Pools[0].Worker.BlockSize {
			bad("pool %d: block size %d differs from pool 0's %d (requests are hashed once)", i, pool.Worker.BlockSize, c.Pools[0].Worker.BlockSize)
		}
		errs = append(errs, pool.Worker.validate()...)
		if pool.Profile == nil {
			bad("no step-time profile")
		} else if err := pool.Profile.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.Pools) > 1 && c.Decider == nil {
		bad("%d pools and no Decider to choose a request's path", len(c.Pools))
	}
	errs = append(errs, c.checkMembership()...)
	if c.Router.KVEventLag < 0 || c.Router.MetricsLag < 0 {
		errs = append(errs, inputerr.Fieldf("kv_event_lag", "and `metrics_lag` must be ≥ 0"))
	}
	if c.Router.Retries < 0 || c.Router.Retries > 100 {
		errs = append(errs, inputerr.Fieldf("retry", "%d must be in [0, 100]", c.Router.Retries))
	}
	if c.Router.Timeout < 0 {
		errs = append(errs, inputerr.Fieldf("request_timeout_s", "must be ≥ 0 (0 = none)"))
	}
	if c.Router.Retries > 0 && c.Router.RetryBackoff <= 0 {
		errs = append(errs, inputerr.Fieldf("retry_backoff", "must be > 0 when `retry` is set"))
	}
	return errors.Join(errs...)
}

// validate reports every problem of one engine configuration.
func (w WorkerConfig) validate() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if w.MaxNumSeqs < 1 {
		errs = append(errs, inputerr.Fieldf("max_num_seqs", "%d must be ≥ 1", w.MaxNumSeqs))
	}
	if w.MaxNumBatchedTokens < 1 {
		errs = append(errs, inputerr.Fieldf("max_num_batched_tokens", "%d must be ≥ 1", w.MaxNumBatchedTokens))
	}
	if err := CheckBlockSize(w.BlockSize); err != nil {
		errs = append(errs, err)
	}
	if w.KVBlocks < 1 {
		bad("KV capacity of %d blocks must be ≥ 1", w.KVBlocks)
	}
	if w.Engine != VLLM && w.Engine != TRTLLM {
		errs = append(errs, inputerr.Fieldf("engine", "%v: want vllm or trtllm", w.Engine))
	}
	if w.Engine == TRTLLM && w.AsyncScheduling {
		bad("a TensorRT-LLM worker with vLLM's async scheduling (its overlap scheduler is NoOverlap's)")
	}
	if w.Engine == VLLM && (w.CapacityPolicy != GuaranteedNoEvict || w.ChunkedPrefill || w.NoOverlap) {
		bad("a vLLM worker with TensorRT-LLM settings (capacity policy %v, chunked prefill %v, overlap off %v)", w.CapacityPolicy, w.ChunkedPrefill, w.NoOverlap)
	}
	errs = append(errs, w.HostTier.validate(w.Engine)...)
	errs = append(errs, w.LMCache.validate(w)...)
	if errs = append(errs, w.KVBM.validate()...); w.KVBM.On && !w.HostTier.on() {
		errs = append(errs, inputerr.Fieldf("kvbm_cpu_cache_gb", "KVBM without a host tier"))
	}
	if w.CapacityPolicy > StaticBatch {
		errs = append(errs, inputerr.Fieldf("capacity_scheduler_policy", "%v: want GUARANTEED_NO_EVICT, MAX_UTILIZATION or STATIC_BATCH", w.CapacityPolicy))
	}
	if w.MaxModelLen < 1 {
		errs = append(errs, inputerr.Fieldf("max_model_len", "%d must be ≥ 1", w.MaxModelLen))
	} else if w.KVBlocks >= 1 && w.BlockSize >= 1 && w.MaxModelLen > w.KVBlocks*w.BlockSize {
		fraction := "gpu_memory_utilization"
		if w.Engine == TRTLLM {
			fraction = "free_gpu_memory_fraction"
		}
		errs = append(errs, inputerr.Fieldf("max_model_len", "%d needs more KV than a worker has (%d blocks × %d = %d tokens); lower it or raise `%s`",
			w.MaxModelLen, w.KVBlocks, w.BlockSize, w.KVBlocks*w.BlockSize, fraction))
	}
	return errs
}

// EngineFlags are the user's engine knobs; a zero field means the
// engine's default (vLLM's unless Engine says otherwise).
type EngineFlags struct {
	BlockSize            int
	MaxModelLen          int
	MaxNumSeqs           int
	MaxNumBatchedTokens  int
	GPUMemoryUtilization float64
	NoPrefixCaching      bool
	// VLLMVersion is the vLLM release whose defaults fill the zero fields
	// (model.VLLMDefaults: batch budgets by GPU, async scheduling) and whose
	// start-up profiling sizes the KV cache; NumGPUBlocksOverride and
	// KVCacheTokens feed the memory model too (model.Engine).
	VLLMVersion string
	// AsyncScheduling is vLLM's --async-scheduling / --no-async-scheduling;
	// nil means the release's default.
	AsyncScheduling      *bool
	NumGPUBlocksOverride int
	KVCacheTokens        int
	// KVOffloadingSizeGiB is vLLM's --kv-offloading-size with the native
	// backend: GiB of CPU memory per worker for its KV offloading tier
	// (0 = none; hostTierConfig).
	KVOffloadingSizeGiB float64
	// LMCacheMaxLocalCPUSizeGiB, LMCacheChunkSize and LMCacheWarm are
	// LMCache's CPU tier through vLLM's connector (max_local_cpu_size GiB,
	// chunk_size tokens, 0 = 256; 0 GiB = none) and its warm start
	// (lmcacheConfig).
	LMCacheMaxLocalCPUSizeGiB float64
	LMCacheChunkSize          int
	LMCacheWarm               bool
	// KVBMCPUCacheGB and KVBMDiskCacheGB are Dynamo KVBM's
	// DYN_KVBM_CPU_CACHE_GB and DYN_KVBM_DISK_CACHE_GB: decimal GB per
	// worker of its host and disk tiers (0 = none; kvbmConfig).
	KVBMCPUCacheGB, KVBMDiskCacheGB float64
	// KVBMDiskReadGBs and KVBMDiskWriteGBs are the KVBM disk's bandwidths
	// in GB/s (0: DefaultDiskReadBytesPerSec, DefaultDiskWriteBytesPerSec).
	KVBMDiskReadGBs, KVBMDiskWriteGBs float64
	// KVBMEvents is the KV event consolidator's mode (kvbmevents.go).
	KVBMEvents KVBMEvents
	// Engine selects the scheduler; the rest are TensorRT-LLM's knobs
	// (WorkerConfig), FreeGPUMemoryFraction its memory rule's fraction.
	Engine                EngineKind
	CapacityPolicy        CapacityPolicy
	ChunkedPrefill        bool
	NoOverlap             bool
	FreeGPUMemoryFraction float64
}

// TensorRT-LLM's batch defaults: BaseLlmArgs.max_batch_size and
// max_num_tokens at 1.3.0rc14, which trtllm-serve and Dynamo's TRT-LLM
// worker keep (reading §1).
const (
	TRTLLMMaxBatchSize = 2048
	TRTLLMMaxNumTokens = 8192
)

// ResolveWorker fills the engine's defaults and derives the KV capacity.
// vLLM: the batch defaults and async scheduling are the release's (its
// API-server rule applied to the GPU's memory and name,
// model.VLLMDefaults), and max_num_seqs never exceeds
// max_num_batched_tokens.
// TensorRT-LLM: max_batch_size 2048, max_num_tokens 8192 on every GPU,
// tokens_per_block 32, its own memory rule. Both: max_model_len (max_seq_len)
// defaults to the model's max_position_embeddings.
func ResolveWorker(dep model.Deployment, f EngineFlags) (WorkerConfig, error) {
	var errs []error
	trt := f.Engine == TRTLLM
	if f.GPUMemoryUtilization == 0 {
		f.GPUMemoryUtilization = 0.9
	}
	dep.GPUMemoryUtilization = f.GPUMemoryUtilization
	if f.BlockSize == 0 {
		f.BlockSize = DefaultBlockSize(f.Engine)
	}
	if err := CheckBlockSize(f.BlockSize); err != nil {
		errs = append(errs, err)
	}
	seqs, tokens, async := TRTLLMMaxBatchSize, TRTLLMMaxNumTokens, false
	if !trt {
		var err error
		if seqs, tokens, async, err = vllmDefaults(dep.GPU, f); err != nil {
			errs = append(errs, err)
		}
	} else if f.AsyncScheduling != nil {
		errs = append(errs, inputerr.Fieldf("async_scheduling", "is vLLM's: TensorRT-LLM's overlap scheduler is on unless `disable_overlap_scheduler`"))
	}
	if f.MaxNumBatchedTokens == 0 {
		f.MaxNumBatchedTokens = tokens
	}
	if f.MaxNumSeqs == 0 {
		f.MaxNumSeqs = seqs
		if !trt {
			f.MaxNumSeqs = min(seqs, f.MaxNumBatchedTokens)
		}
	}
	if !trt && (f.CapacityPolicy != GuaranteedNoEvict || f.ChunkedPrefill || f.NoOverlap || f.FreeGPUMemoryFraction != 0) {
		errs = append(errs, inputerr.Fieldf("engine", "vllm has no capacity_scheduler_policy, enable_chunked_prefill, disable_overlap_scheduler or free_gpu_memory_fraction (TensorRT-LLM's settings): set engine trtllm or drop them"))
	}
	if f.MaxModelLen == 0 {
		f.MaxModelLen = dep.Model.MaxPositions
	} else if f.MaxModelLen > dep.Model.MaxPositions {
		errs = append(errs, inputerr.Fieldf("max_model_len", "%d exceeds %s's max_position_embeddings %d", f.MaxModelLen, dep.Model.Name, dep.Model.MaxPositions))
	}
	blocks := 0
	if len(errs) == 0 {
		var err error
		eng := f.memoryEngine()
		if blocks, err = dep.KVBlocks(f.BlockSize, eng); err != nil {
			errs = append(errs, err)
		} else if err := overrideFits(f, blocks); err != nil {
			errs = append(errs, err)
		}
	}
	host, err := hostTierConfig(dep, f)
	if err != nil {
		errs = append(errs, err)
	}
	lmc, err := lmcacheConfig(dep, f)
	if err != nil {
		errs = append(errs, err)
	}
	kvHost, kv, err := kvbmConfig(dep, f)
	if err != nil {
		errs = append(errs, err)
	} else if kv.On {
		host = kvHost
	}
	if len(errs) > 0 {
		return WorkerConfig{}, errors.Join(errs...)
	}
	return WorkerConfig{
		HostTier:            host,
		LMCache:             lmc,
		KVBM:                kv,
		MaxNumSeqs:          f.MaxNumSeqs,
		MaxNumBatchedTokens: f.MaxNumBatchedTokens,
		BlockSize:           f.BlockSize,
		KVBlocks:            blocks,
		MaxModelLen:         f.MaxModelLen,
		NoPrefixCaching:     f.NoPrefixCaching,
		Engine:              f.Engine,
		CapacityPolicy:      f.CapacityPolicy,
		ChunkedPrefill:      f.ChunkedPrefill,
		NoOverlap:           f.NoOverlap,
		AsyncScheduling:     async,
	}, nil
}

// vllmDefaults are vLLM's batch budgets and async scheduling for a worker
// on gpu with flags f (an explicit async setting replaces the release's;
// the flag exists from 0.10.0).
func vllmDefaults(gpu model.GPU, f EngineFlags) (seqs, tokens int, async bool, err error) {
	d, err := model.VLLMDefaults(f.VLLMVersion, gpu.MemoryBytes, gpu.Name)
	if err != nil {
		return 256, 2048, false, err
	}
	async = d.AsyncScheduling
	if f.AsyncScheduling != nil {
		if !d.AsyncSchedulingFlag {
			return 0, 0, false, inputerr.Fieldf("async_scheduling", "vLLM %s has no --async-scheduling (it came in 0.10.0)", d.Release)
		}
		async = *f.AsyncScheduling
	}
	return d.MaxNumSeqs, d.MaxNumBatchedTokens, async, nil
}

// memoryEngine is what the memory model needs of f (its defaults filled).
func (f EngineFlags) memoryEngine() model.Engine {
	return model.Engine{Version: f.VLLMVersion, MaxNumBatchedTokens: f.MaxNumBatchedTokens, MaxNumSeqs: f.MaxNumSeqs,
		NumGPUBlocksOverride: f.NumGPUBlocksOverride, KVCacheTokens: f.KVCacheTokens,
		TRTLLM: f.Engine == TRTLLM, FreeGPUMemoryFraction: f.FreeGPUMemoryFraction}
}

// MemoryEngine is the memory model's view of engine flags f once
// ResolveWorker has given w its settings (for memory.used in outputs).
func MemoryEngine(f EngineFlags, w WorkerConfig) model.Engine {
	f.MaxNumSeqs, f.MaxNumBatchedTokens = w.MaxNumSeqs, w.MaxNumBatchedTokens
	f.Engine = w.Engine
	return f.memoryEngine()
}

// overrideFits refuses a KV capacity the user set (num_gpu_blocks_override,
// kv_cache_tokens) that holds less than one request of max_model_len,
// naming the override: raising gpu_memory_utilization, the remedy for a
// derived capacity, would change nothing.
func overrideFits(f EngineFlags, blocks int) error {
	field, v := "num_gpu_blocks_override", f.NumGPUBlocksOverride
	switch {
	case f.NumGPUBlocksOverride == 0 && f.KVCacheTokens == 0:
		return nil
	case f.NumGPUBlocksOverride == 0:
		field, v = "kv_cache_tokens", f.KVCacheTokens
	}
	if have := blocks * f.BlockSize; f.MaxModelLen > have {
		return inputerr.Fieldf(field, "%d gives %d blocks × %d = %d tokens of KV, less than one request of `max_model_len` %d: raise it or lower `max_model_len`",
			v, blocks, f.BlockSize, have, f.MaxModelLen)
	}
	return nil
}
