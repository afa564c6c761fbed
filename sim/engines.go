package sim

import (
	"fmt"
	"strings"
)

// EngineKind is the serving engine a worker simulates: its scheduler, its
// KV accounting and its defaults. The zero value is vLLM.
type EngineKind uint8

// The engines a worker can run.
const (
	// VLLM is vLLM V1 (worker.go): allocate as it goes, preempt the newest
	// request when a block is missing, chunked prefill.
	VLLM EngineKind = iota
	// TRTLLM is TensorRT-LLM 1.3.0rc14's PyTorch executor, the release
	// Dynamo 1.2.0 ships (trtllm.go; docs/readings/tensorrt-llm.md).
	TRTLLM
)

var engineNames = [...]string{"vllm", "trtllm"}

func (e EngineKind) String() string {
	if int(e) < len(engineNames) {
		return engineNames[e]
	}
	return fmt.Sprintf("engine(%d)", e)
}

// ParseEngine reads an engine name: vllm (or empty) or trtllm.
func ParseEngine(s string) (EngineKind, error) {
	switch strings.ToLower(s) {
	case "", "vllm":
		return VLLM, nil
	case "trtllm", "trt-llm", "tensorrt-llm":
		return TRTLLM, nil
	}
	return VLLM, fmt.Errorf("%q: want vllm or trtllm", s)
}

// MarshalText writes the engine's name.
func (e EngineKind) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText reads an engine's name.
func (e *EngineKind) UnmarshalText(b []byte) error {
	k, err := ParseEngine(string(b))
	*e = k
	return err
}

// DefaultBlockSize is an engine's KV block size when none is set: 64 for
// vLLM (the 8×A100 study's and Dynamo's, not vLLM's own 16), 32 for
// TensorRT-LLM (KvCacheConfig.tokens_per_block at 1.3.0rc2 and rc14).
func DefaultBlockSize(e EngineKind) int {
	if e == TRTLLM {
		return 32
	}
	return 64
}

// CapacityPolicy is TensorRT-LLM's capacity_scheduler_policy: which
// requests may hold KV this step. The zero value is its default.
type CapacityPolicy uint8

// TensorRT-LLM's capacity scheduler policies (the CapacitySchedulerPolicy
// enum of 1.3.0rc14's llm_args; rc14 has no PREFILL_FIRST).
const (
	// GuaranteedNoEvict admits a request only if the blocks of its whole
	// possible length fit beside every running request's remaining worst
	// case; it never pauses a request.
	GuaranteedNoEvict CapacityPolicy = iota
	// MaxUtilization reserves only the next step's blocks and pauses the
	// most recently started request (recompute) when one does not fit.
	MaxUtilization
	// StaticBatch is GuaranteedNoEvict that admits only while nothing is
	// generating: whole batches at a time.
	StaticBatch
)

var capacityNames = [...]string{"GUARANTEED_NO_EVICT", "MAX_UTILIZATION", "STATIC_BATCH"}

func (p CapacityPolicy) String() string {
	if int(p) < len(capacityNames) {
		return capacityNames[p]
	}
	return fmt.Sprintf("policy(%d)", p)
}

// ParseCapacityPolicy reads a policy as TensorRT-LLM spells it (any case;
// empty is the default, GUARANTEED_NO_EVICT).
func ParseCapacityPolicy(s string) (CapacityPolicy, error) {
	if s == "" {
		return GuaranteedNoEvict, nil
	}
	for i, n := range capacityNames {
		if strings.EqualFold(s, n) {
			return CapacityPolicy(i), nil
		}
	}
	return GuaranteedNoEvict, fmt.Errorf("%q: want GUARANTEED_NO_EVICT, MAX_UTILIZATION or STATIC_BATCH", s)
}

// MarshalText writes the policy as TensorRT-LLM spells it.
func (p CapacityPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a policy as TensorRT-LLM spells it.
func (p *CapacityPolicy) UnmarshalText(b []byte) error {
	k, err := ParseCapacityPolicy(string(b))
	*p = k
	return err
}
