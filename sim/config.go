package sim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
)

// Config is one run's setup. Build WorkerConfig with ResolveWorker.
type Config struct {
	Workers int          // N, the number of workers (each one GPU or TP group)
	Worker  WorkerConfig // identical for every worker
	Profile *model.Profile
	// Seed drives every random stream of the run (service noise, router
	// tie-breaks); the same seed and inputs give identical results.
	Seed uint64
	// CheckInvariants runs the expensive KV consistency checks after every
	// step (conservation and time order are always checked).
	CheckInvariants bool
	// Router configures the router stage around the policy.
	Router RouterConfig
	// Observer, if set, is told about every step (tests, utilisation
	// sampling). nil means no one listens.
	Observer StepObserver
	// Decisions, if set, is told about every routing decision.
	Decisions DecisionObserver
	// FollowUp, if set, adds requests during the run: closed-loop clients
	// whose next request depends on when their previous one ended. It has
	// per-run state, so each run needs its own.
	FollowUp FollowUp
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

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Workers < 1 || c.Workers > 4096 {
		bad("--n %d must be in [1, 4096]", c.Workers)
	}
	w := c.Worker
	if w.MaxNumSeqs < 1 {
		bad("--max-num-seqs %d must be ≥ 1", w.MaxNumSeqs)
	}
	if w.MaxNumBatchedTokens < 1 {
		bad("--max-num-batched-tokens %d must be ≥ 1", w.MaxNumBatchedTokens)
	}
	if err := CheckBlockSize(w.BlockSize); err != nil {
		errs = append(errs, err)
	}
	if w.KVBlocks < 1 {
		bad("KV capacity of %d blocks must be ≥ 1", w.KVBlocks)
	}
	if w.MaxModelLen < 1 {
		bad("--max-model-len %d must be ≥ 1", w.MaxModelLen)
	} else if w.KVBlocks >= 1 && w.BlockSize >= 1 && w.MaxModelLen > w.KVBlocks*w.BlockSize {
		bad("--max-model-len %d needs more KV than a worker has (%d blocks × %d = %d tokens); lower it or raise --gpu-memory-utilization",
			w.MaxModelLen, w.KVBlocks, w.BlockSize, w.KVBlocks*w.BlockSize)
	}
	if c.Router.KVEventLag < 0 || c.Router.MetricsLag < 0 {
		bad("--kv-event-lag and --metrics-lag must be ≥ 0")
	}
	if c.Router.Retries < 0 || c.Router.Retries > 100 {
		bad("--retry %d must be in [0, 100]", c.Router.Retries)
	}
	if c.Router.Timeout < 0 {
		bad("--request-timeout must be ≥ 0 (0 = none)")
	}
	if c.Router.Retries > 0 && c.Router.RetryBackoff <= 0 {
		bad("--retry-backoff must be > 0 when --retry is set")
	}
	if c.Profile == nil {
		bad("no step-time profile")
	} else if err := c.Profile.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// EngineFlags are the user's engine knobs; a zero field means vLLM's default.
type EngineFlags struct {
	BlockSize            int
	MaxModelLen          int
	MaxNumSeqs           int
	MaxNumBatchedTokens  int
	GPUMemoryUtilization float64
	NoPrefixCaching      bool
	// VLLMVersion, NumGPUBlocksOverride and KVCacheTokens feed the memory
	// model (model.Engine).
	VLLMVersion          string
	NumGPUBlocksOverride int
	KVCacheTokens        int
}

// ResolveWorker fills vLLM's defaults and derives the KV capacity.
// vLLM's API server uses 8192 batched tokens and 1024 sequences on GPUs with
// at least 70 GiB that are not A100s, and 2048 / 256 otherwise; max_num_seqs
// never exceeds max_num_batched_tokens; max_model_len defaults to the
// model's max_position_embeddings.
func ResolveWorker(dep model.Deployment, f EngineFlags) (WorkerConfig, error) {
	var errs []error
	if f.GPUMemoryUtilization == 0 {
		f.GPUMemoryUtilization = 0.9
	}
	dep.GPUMemoryUtilization = f.GPUMemoryUtilization
	if f.BlockSize == 0 {
		f.BlockSize = 64
	}
	if err := CheckBlockSize(f.BlockSize); err != nil {
		errs = append(errs, err)
	}
	large := dep.GPU.MemoryBytes >= 70*model.GiB && !strings.Contains(strings.ToLower(dep.GPU.Name), "a100")
	seqs, tokens := 256, 2048
	if large {
		seqs, tokens = 1024, 8192
	}
	if f.MaxNumBatchedTokens == 0 {
		f.MaxNumBatchedTokens = tokens
	}
	if f.MaxNumSeqs == 0 {
		f.MaxNumSeqs = min(seqs, f.MaxNumBatchedTokens)
	}
	if f.MaxModelLen == 0 {
		f.MaxModelLen = dep.Model.MaxPositions
	} else if f.MaxModelLen > dep.Model.MaxPositions {
		errs = append(errs, fmt.Errorf("--max-model-len %d exceeds %s's max_position_embeddings %d", f.MaxModelLen, dep.Model.Name, dep.Model.MaxPositions))
	}
	blocks := 0
	if len(errs) == 0 {
		var err error
		eng := model.Engine{Version: f.VLLMVersion, MaxNumBatchedTokens: f.MaxNumBatchedTokens, MaxNumSeqs: f.MaxNumSeqs,
			NumGPUBlocksOverride: f.NumGPUBlocksOverride, KVCacheTokens: f.KVCacheTokens}
		if blocks, err = dep.KVBlocks(f.BlockSize, eng); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return WorkerConfig{}, errors.Join(errs...)
	}
	return WorkerConfig{
		MaxNumSeqs:          f.MaxNumSeqs,
		MaxNumBatchedTokens: f.MaxNumBatchedTokens,
		BlockSize:           f.BlockSize,
		KVBlocks:            blocks,
		MaxModelLen:         f.MaxModelLen,
		NoPrefixCaching:     f.NoPrefixCaching,
	}, nil
}
