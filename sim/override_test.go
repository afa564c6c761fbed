package sim_test

import (
	"errors"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	. "github.com/routesim/routesim/sim"
)

// TestOverrideTooSmallNamesTheOverride: a KV capacity the user set that
// holds less than one max_model_len request is blamed on the override,
// not on gpu_memory_utilization (which an override makes irrelevant).
func TestOverrideTooSmallNamesTheOverride(t *testing.T) {
	cat := model.DefaultCatalogue()
	gpu, _ := cat.GPU("A100-SXM4-40GB")
	llm, _ := cat.Model("Qwen3-8B")
	dep := model.Deployment{GPU: gpu, Model: llm, TP: 1, Quant: model.BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
	for _, tc := range []struct {
		f     EngineFlags
		field string
	}{
		{EngineFlags{NumGPUBlocksOverride: 1}, "num_gpu_blocks_override"},
		{EngineFlags{KVCacheTokens: 100}, "kv_cache_tokens"},
		{EngineFlags{KVCacheTokens: 100, MaxModelLen: 64}, ""}, // fits
	} {
		_, err := ResolveWorker(dep, tc.f)
		var fe *inputerr.FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%+v: %v", tc.f, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%+v: %v, want an error naming %s", tc.f, err, tc.field)
		}
	}
}
