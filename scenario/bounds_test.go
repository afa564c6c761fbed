package scenario

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
)

// TestSpecRangesNameTheField: every out-of-range engine limit and router
// delay is refused by Validate — the check run, sweep, plan and
// calibration setups all go through — as a field error naming that field
// and no other, before any arithmetic can overflow on it.
func TestSpecRangesNameTheField(t *testing.T) {
	const maxInt = math.MaxInt
	for _, tc := range []struct {
		field string
		set   func(s *Spec)
	}{
		{"max_num_seqs", func(s *Spec) { s.MaxNumSeqs = maxInt }},
		{"max_num_seqs", func(s *Spec) { s.MaxNumSeqs = -1 }},
		{"max_num_batched_tokens", func(s *Spec) { s.MaxNumBatchedTokens = maxInt }},
		{"max_num_batched_tokens", func(s *Spec) { s.MaxNumBatchedTokens = -1 }},
		{"max_model_len", func(s *Spec) { s.MaxModelLen = maxInt }},
		{"num_gpu_blocks_override", func(s *Spec) { s.NumGPUBlocksOverride = maxInt }},
		{"kv_cache_tokens", func(s *Spec) { s.KVCacheTokens = maxInt }},
		{"kv_offloading_size_gib", func(s *Spec) { s.KVOffloadingSizeGiB = math.NaN() }},
		{"kv_offloading_size_gib", func(s *Spec) { s.KVOffloadingSizeGiB = -1 }},
		{"kv_offloading_size_gib", func(s *Spec) { s.KVOffloadingSizeGiB = 1e300 }},
		{"lmcache_max_local_cpu_size", func(s *Spec) { s.LMCacheMaxLocalCPUSize = math.NaN() }},
		{"lmcache_max_local_cpu_size", func(s *Spec) { s.LMCacheMaxLocalCPUSize = -1 }},
		{"lmcache_max_local_cpu_size", func(s *Spec) { s.LMCacheMaxLocalCPUSize, s.KVOffloadingSizeGiB = 8, 8 }},
		{"lmcache_chunk_size", func(s *Spec) { s.LMCacheMaxLocalCPUSize, s.LMCacheChunkSize = 8, -1 }},
		{"lmcache_chunk_size", func(s *Spec) { s.LMCacheMaxLocalCPUSize, s.LMCacheChunkSize = 8, maxInt }},
		{"lmcache_chunk_size", func(s *Spec) { s.LMCacheChunkSize = 256 }},
		{"lmcache_warm", func(s *Spec) { s.LMCacheWarm = true }},
		{"lmcache_max_local_cpu_size", func(s *Spec) { s.LMCacheMaxLocalCPUSize, s.KVBMCPUCacheGB = 8, 8 }},
		{"kvbm_cpu_cache_gb", func(s *Spec) { s.KVBMCPUCacheGB = math.NaN() }},
		{"kvbm_cpu_cache_gb", func(s *Spec) { s.KVBMCPUCacheGB = -1 }},
		{"kvbm_cpu_cache_gb", func(s *Spec) { s.KVBMCPUCacheGB = 1e300 }},
		{"kvbm_disk_cache_gb", func(s *Spec) { s.KVBMDiskCacheGB = math.Inf(1) }},
		{"kvbm_disk_cache_gb", func(s *Spec) { s.KVBMDiskCacheGB = -2 }},
		{"kvbm_cpu_cache_gb", func(s *Spec) { s.KVBMCPUCacheGB, s.KVOffloadingSizeGiB = 10, 10 }},
		{"kvbm_disk_read_gb_s", func(s *Spec) { s.KVBMDiskReadGBs = -1 }},
		{"kvbm_disk_write_gb_s", func(s *Spec) { s.KVBMDiskWriteGBs = math.NaN() }},
		{"kvbm_kv_events", func(s *Spec) { s.KVBMKVEvents = "merged" }},
		{"kvbm_kv_events", func(s *Spec) { s.KVBMCPUCacheGB, s.KVBMKVEvents, s.DynamoVersion = 8, "passthrough", "0.9.0" }},
		{"tp", func(s *Spec) { s.TP = 0 }},
		{"tp", func(s *Spec) { s.TP = maxInt }},
		{"n", func(s *Spec) { s.N = maxInt }},
		{"gpu_memory_utilization", func(s *Spec) { s.GPUMemUtil = math.NaN() }},
		{"gpu_memory_utilization", func(s *Spec) { s.GPUMemUtil = math.Inf(1) }},
		{"kv_event_lag", func(s *Spec) { s.KVEventLag = 2562047 * time.Hour }},
		{"kv_event_lag", func(s *Spec) { s.KVEventLag = -time.Nanosecond }},
		{"metrics_lag", func(s *Spec) { s.MetricsLag = math.MaxInt64 }},
		{"retry_backoff", func(s *Spec) { s.RetryBackoff = math.MaxInt64 }},
		{"retry_backoff", func(s *Spec) { s.RetryBackoff = -time.Second }},
		{"retry_backoff", func(s *Spec) { s.RetryBackoff = 2 * time.Hour }},
	} {
		s := Defaults()
		tc.set(&s)
		err := s.Validate()
		var fe *inputerr.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a field error", tc.field, err)
			continue
		}
		var list []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			list = j.Unwrap()
		}
		if len(list) != 1 || !errors.As(list[0], &fe) || fe.Field != tc.field || strings.Contains(err.Error(), "-8589934592") {
			t.Errorf("%s: %q, want one error naming only %s", tc.field, err, tc.field)
		}
	}
	// The documented bounds themselves are valid.
	s := Defaults()
	s.KVEventLag, s.MetricsLag, s.RetryBackoff = 24*time.Hour, 24*time.Hour, time.Hour
	s.MaxNumSeqs, s.MaxNumBatchedTokens = 1<<20, 1<<24
	if err := s.Validate(); err != nil {
		t.Errorf("settings at their bounds: %v", err)
	}
	// KVBM's passthrough consolidator came with Dynamo 1.2.0 (#8380).
	for _, v := range []string{"1.2.0", "1.4.0"} {
		s := Defaults()
		s.KVBMCPUCacheGB, s.KVBMKVEvents, s.DynamoVersion = 8, "passthrough", v
		if err := s.Validate(); err != nil {
			t.Errorf("passthrough at Dynamo %s: %v", v, err)
		}
	}
}

// TestScenarioFileEngineLimitPositioned: an engine limit out of range in a
// scenario file is reported at its file and line, as every other field.
func TestScenarioFileEngineLimitPositioned(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(p, []byte("{\n  \"n\": 2,\n  \"max_num_seqs\": 9223372036854775807\n}\n"), 0o644)
	_, err := Load(p, Defaults())
	if err == nil || !strings.Contains(err.Error(), p+":3: max_num_seqs") || strings.Count(err.Error(), "max_num_seqs") != 1 {
		t.Errorf("%v, want one error at %s:3 naming max_num_seqs", err, p)
	}
}

// TestSubNanosecondTimeout: a positive request timeout below the clock's
// nanosecond is one nanosecond, never 0 (no timeout); 0 stays "none".
func TestSubNanosecondTimeout(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want sim.Time
	}{{0, 0}, {4e-10, 1}, {1e-300, 1}, {5e-10, 1}, {1e-9, 1}, {1.6e-9, 2}, {300, 300 * sim.Second}} {
		s := Defaults()
		s.Trace, s.First, s.RequestTimeoutS = "../testdata/traces/arxiv_head60.jsonl", 5, tc.s
		b, err := s.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Config.Router.Timeout; got != tc.want {
			t.Errorf("request_timeout_s %g: timeout %d ns, want %d", tc.s, got, tc.want)
		}
	}
}
