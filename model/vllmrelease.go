package model

import (
	"fmt"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// vLLM's engine defaults by release, for its OpenAI API server (`vllm
// serve`, UsageContext.OPENAI_API_SERVER), from 0.8.5 to 0.27.1, the
// newest release the source read here shows (Dynamo's main pins it,
// 2026-08-18). docs/readings/vllm-releases.md cites the file, release and
// pull request behind every row; the table test (vllmrelease_test.go)
// repeats each value with its citation.

// VLLMEngineDefaults are what `vllm serve` of one release chooses on one
// GPU when a flag is not given.
type VLLMEngineDefaults struct {
	// Release is the canonical version ("0.10.1.1").
	Release string
	// MaxNumBatchedTokens and MaxNumSeqs are the scheduler's budgets
	// (EngineArgs._set_default_args_v1, later get_batch_defaults, in
	// vllm/engine/arg_utils.py): chosen by device memory and name.
	MaxNumBatchedTokens, MaxNumSeqs int
	// BlockSize is the KV block size on CUDA (16 throughout).
	BlockSize int
	// PrefixCaching is enable_prefix_caching's default for a generative
	// model (on in V1 throughout).
	PrefixCaching bool
	// ChunkedPrefill is enable_chunked_prefill's default for a generative
	// model: V1 always chunks.
	ChunkedPrefill bool
	// AsyncScheduling is whether the scheduler plans step n+1 while step n
	// runs, with no flag given (on from 0.14.0, PR #27614, for a generative
	// model on the uni or mp executor without pipeline parallelism);
	// AsyncSchedulingFlag says --async-scheduling exists (from 0.10.0, PR
	// #19970).
	AsyncScheduling, AsyncSchedulingFlag bool
	// V0ByEnvOnly says the V0 engine can still be selected, but only by
	// the environment (VLLM_USE_V1=0): V1 is the default throughout, and V0
	// is gone from 0.11.0.
	V0ByEnvOnly bool
	// LegacyActivation says start-up profiling reserves the pre-0.17
	// activation memory (LegacyActivationFactor).
	LegacyActivation bool
	// CUDAGraphMemoryProfiled says start-up profiling also deducts the
	// estimated CUDA graph memory from the KV cache (PR #30515, on by
	// default from 0.21.0; VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS). The
	// memory model does not deduct it (it has no estimate of graph memory;
	// with --enforce-eager there are no graphs).
	CUDAGraphMemoryProfiled bool
}

// vllmRelease is one row of the release table: the settings that moved
// within the supported range.
type vllmRelease struct {
	a100Small  bool // A100s keep the small budgets on ≥ 70 GiB (0.9.0, PR #17885)
	asyncFlag  bool // --async-scheduling exists (0.10.0, PR #19970)
	v0Gone     bool // the V0 engine is removed (0.11.0)
	asyncOn    bool // async scheduling on by default (0.14.0, PR #27614)
	newProfile bool // the smaller activation reservation (0.17.0)
	graphMem   bool // CUDA graph memory deducted at start-up (0.21.0, PR #30515)
}

// vllmReleases are the supported releases, oldest first. A row's settings
// follow from its series: see releaseRow.
var vllmReleases = []string{
	"0.8.5", "0.8.5.post1",
	"0.9.0", "0.9.0.1", "0.9.1", "0.9.2",
	"0.10.0", "0.10.1", "0.10.1.1", "0.10.2",
	"0.11.0", "0.11.1", "0.11.2",
	"0.12.0", "0.13.0",
	"0.14.0", "0.14.1", "0.15.0", "0.15.1", "0.16.0",
	"0.17.0", "0.17.1", "0.18.0", "0.19.0", "0.19.1",
	"0.20.0", "0.20.1", "0.20.2", "0.21.0", "0.22.0", "0.22.1",
	"0.23.0", "0.24.0", "0.25.0", "0.25.1", "0.26.0", "0.27.0", "0.27.1",
}

// VLLMReleases lists the releases --vllm-version accepts, oldest first.
func VLLMReleases() []string { return append([]string(nil), vllmReleases...) }

// bigGPUBytes is the device memory from which vLLM picks the large
// budgets: 70 GiB (device_memory >= 70 * GiB_bytes).
const bigGPUBytes = 70 * GiB

// releaseRow builds the row of a supported release from the minor series
// at which each setting changed.
func releaseRow(v string) vllmRelease {
	minor := 0
	fmt.Sscanf(v, "0.%d", &minor)
	return vllmRelease{a100Small: minor >= 9, asyncFlag: minor >= 10, v0Gone: minor >= 11,
		asyncOn: minor >= 14, newProfile: minor >= 17, graphMem: minor >= 21}
}

// CanonicalVLLMVersion spells a vLLM release as the table does: "v0.9.0"
// and "0.9.0" are the same release; empty means DefaultVLLMVersion. An
// unknown release is an error listing the supported ones (no nearest
// match: another release's defaults would be a different engine).
func CanonicalVLLMVersion(v string) (string, error) {
	s := strings.TrimSpace(v)
	if s == "" {
		return DefaultVLLMVersion, nil
	}
	s = strings.TrimPrefix(s, "v")
	for _, r := range vllmReleases {
		if r == s {
			return r, nil
		}
	}
	return "", inputerr.Fieldf("vllm_version", "%q is not a supported vLLM release (supported: %s)", v, strings.Join(vllmReleases, ", "))
}

// VLLMDefaults are the engine defaults of vLLM release version (empty =
// DefaultVLLMVersion) on a GPU of memoryBytes CUDA-visible memory named
// deviceName (as torch.cuda.get_device_name reports it; a catalogue name
// such as "A100-SXM4-80GB" carries the same part name). A GPU from a file
// gets the same rule as a catalogue one.
func VLLMDefaults(version string, memoryBytes int64, deviceName string) (VLLMEngineDefaults, error) {
	v, err := CanonicalVLLMVersion(version)
	if err != nil {
		return VLLMEngineDefaults{}, err
	}
	r := releaseRow(v)
	d := VLLMEngineDefaults{Release: v, BlockSize: 16, PrefixCaching: true, ChunkedPrefill: true,
		AsyncScheduling: r.asyncOn, AsyncSchedulingFlag: r.asyncFlag, V0ByEnvOnly: !r.v0Gone, LegacyActivation: !r.newProfile,
		CUDAGraphMemoryProfiled: r.graphMem}
	d.MaxNumBatchedTokens, d.MaxNumSeqs = 2048, 256
	big := memoryBytes >= bigGPUBytes
	if r.a100Small && strings.Contains(strings.ToLower(deviceName), "a100") {
		big = false
	}
	if big {
		d.MaxNumBatchedTokens, d.MaxNumSeqs = 8192, 1024
	}
	return d, nil
}
