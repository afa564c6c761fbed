package scenario

import (
	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
)

// checkLMCache validates the LMCache tier's fields on their own (sim's
// lmcacheConfig checks them against the deployment: block size, host
// link).
func (s *Spec) checkLMCache() []error {
	var errs []error
	g, chunk := s.LMCacheMaxLocalCPUSize, s.LMCacheChunkSize
	if g != 0 && !(g > 0 && g <= sim.MaxKVOffloadingGiB) {
		errs = append(errs, inputerr.Fieldf("lmcache_max_local_cpu_size", "%g must be in (0, %d] GiB (0 = no LMCache tier)", g, sim.MaxKVOffloadingGiB))
	}
	if chunk < 0 || chunk > sim.MaxLMCacheChunkSize {
		errs = append(errs, inputerr.Fieldf("lmcache_chunk_size", "%d must be in [1, %d] tokens (0 = LMCache's %d)", chunk, sim.MaxLMCacheChunkSize, sim.LMCacheDefaultChunkSize))
	}
	if g == 0 && chunk != 0 {
		errs = append(errs, inputerr.Fieldf("lmcache_chunk_size", "needs `lmcache_max_local_cpu_size` (the LMCache tier)"))
	}
	if g == 0 && s.LMCacheWarm {
		errs = append(errs, inputerr.Fieldf("lmcache_warm", "needs `lmcache_max_local_cpu_size` (the LMCache tier)"))
	}
	if g != 0 && s.KVOffloadingSizeGiB != 0 {
		errs = append(errs, inputerr.Fieldf("lmcache_max_local_cpu_size", "and `kv_offloading_size_gib` are two CPU tiers for one worker (LMCache's and vLLM's native one): choose one"))
	}
	if g != 0 && (s.KVBMCPUCacheGB != 0 || s.KVBMDiskCacheGB != 0) {
		errs = append(errs, inputerr.Fieldf("lmcache_max_local_cpu_size", "and `kvbm_cpu_cache_gb` are both vLLM KV connectors (LMCacheConnectorV1 and KVBM's) and vLLM takes one: choose one"))
	}
	return errs
}
