package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
)

func lmcDeployment(t testing.TB) model.Deployment {
	cat := model.DefaultCatalogue()
	gpu, err := cat.LoadGPU("A100-SXM4-80GB")
	if err != nil {
		t.Fatal(err)
	}
	m, err := cat.LoadModel("Llama-3.1-8B")
	if err != nil {
		t.Fatal(err)
	}
	return model.Deployment{GPU: gpu, Model: m, TP: 1, KVDtypeBytes: 2}
}

// The llm-d deployment's tier (LMCACHE_MAX_LOCAL_CPU_SIZE=40, chunk_size
// 256 by default): LMCache's allocator takes int(40·1024³) bytes
// (cache_engine.py _Create_memory_allocator); Llama-3.1-8B in bf16 holds
// 32 layers × 2 × 8 KV heads × 128 × 2 B = 128 KiB a token, so a 256-token
// chunk is 32 MiB and 40 GiB hold 1,280; PCIe Gen4 x16 moves 32 GB/s each
// way.
func TestLMCacheConfigFromMaxLocalCPUSize(t *testing.T) {
	dep := lmcDeployment(t)
	l, err := lmcacheConfig(dep, EngineFlags{LMCacheMaxLocalCPUSizeGiB: 40, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if l.Chunks != 1280 || l.ChunkBlocks != 16 || l.ChunkBytes != 32<<20 || l.ChunkNs != float64(32<<20)/32e9*1e9 || l.Warm {
		t.Errorf("40 GiB, Llama-3.1-8B on an A100: %+v, want 1280 chunks of 16 blocks, 32 MiB, %g ns each", l, float64(32<<20)/32e9*1e9)
	}
	l2, err := lmcacheConfig(dep, EngineFlags{LMCacheMaxLocalCPUSizeGiB: 40, LMCacheChunkSize: 512, LMCacheWarm: true, BlockSize: 16, NoPrefixCaching: true})
	if err != nil {
		t.Fatal(err)
	}
	if l2.Chunks != 640 || l2.ChunkBlocks != 32 || !l2.Warm {
		t.Errorf("chunk_size 512, warm, without vLLM's prefix caching: %+v, want 640 chunks of 32 blocks, warm", l2)
	}
	for _, c := range []struct {
		name, field string
		f           EngineFlags
	}{
		{"negative", "lmcache_max_local_cpu_size", EngineFlags{LMCacheMaxLocalCPUSizeGiB: -1, BlockSize: 16}},
		{"NaN", "lmcache_max_local_cpu_size", EngineFlags{LMCacheMaxLocalCPUSizeGiB: math.NaN(), BlockSize: 16}},
		{"too small", "lmcache_max_local_cpu_size", EngineFlags{LMCacheMaxLocalCPUSizeGiB: 0.01, BlockSize: 16}},
		{"trtllm", "lmcache_max_local_cpu_size", EngineFlags{LMCacheMaxLocalCPUSizeGiB: 8, BlockSize: 16, Engine: TRTLLM}},
		{"with vLLM's CPU tier", "lmcache_max_local_cpu_size", EngineFlags{LMCacheMaxLocalCPUSizeGiB: 8, KVOffloadingSizeGiB: 8, BlockSize: 16}},
		{"chunk not a block multiple", "lmcache_chunk_size", EngineFlags{LMCacheMaxLocalCPUSizeGiB: 8, LMCacheChunkSize: 100, BlockSize: 16}},
		{"chunk negative", "lmcache_chunk_size", EngineFlags{LMCacheMaxLocalCPUSizeGiB: 8, LMCacheChunkSize: -256, BlockSize: 16}},
		{"chunk without a tier", "lmcache_chunk_size", EngineFlags{LMCacheChunkSize: 256, BlockSize: 16}},
		{"warm without a tier", "lmcache_warm", EngineFlags{LMCacheWarm: true, BlockSize: 16}},
	} {
		_, err := lmcacheConfig(dep, c.f)
		var fe *inputerr.FieldError
		if err == nil || !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: error %v, want one naming %s", c.name, err, c.field)
		}
	}
	if l, err := lmcacheConfig(dep, EngineFlags{BlockSize: 16}); err != nil || l.on() {
		t.Errorf("no size: %+v, %v; want no tier", l, err)
	}
}

// FuzzLMCacheConfig: any size, chunk and block size give a tier that
// passes the worker's validation, or a field error; never a panic.
func FuzzLMCacheConfig(f *testing.F) {
	f.Add(40.0, 256, 16, 1, false)
	f.Add(0.5, 0, 64, 2, true)
	f.Add(1e300, 1<<30, 0, 8, false)
	dep := lmcDeployment(f)
	f.Fuzz(func(t *testing.T, gib float64, chunk, block, tp int, warm bool) {
		d := dep
		d.TP = max(1, min(tp, 8))
		l, err := lmcacheConfig(d, EngineFlags{LMCacheMaxLocalCPUSizeGiB: gib, LMCacheChunkSize: chunk, LMCacheWarm: warm, BlockSize: block})
		if err != nil {
			var fe *inputerr.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%v: not a field error", err)
			}
			return
		}
		if gib == 0 {
			if l.on() {
				t.Fatalf("no size gave a tier %+v", l)
			}
			return
		}
		if errs := l.validate(WorkerConfig{Engine: VLLM}); len(errs) > 0 {
			t.Fatalf("%g GiB, chunk %d, block %d: tier %+v fails validation: %v", gib, chunk, block, l, errs)
		}
	})
}
