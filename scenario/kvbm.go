package scenario

import (
	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/policy"
	"github.com/routesim/routesim/sim"
)

// checkKVBM validates Dynamo KVBM's fields on their own (sim's kvbmConfig
// checks them against the deployment: block bytes, host link).
func (s *Spec) checkKVBM() []error {
	var errs []error
	for _, c := range []struct {
		field string
		v     float64
	}{{"kvbm_cpu_cache_gb", s.KVBMCPUCacheGB}, {"kvbm_disk_cache_gb", s.KVBMDiskCacheGB}} {
		if c.v != 0 && !(c.v > 0 && c.v <= sim.MaxKVBMCacheGB) {
			errs = append(errs, inputerr.Fieldf(c.field, "%g must be in (0, %d] GB (0 = no tier)", c.v, sim.MaxKVBMCacheGB))
		}
	}
	for _, c := range []struct {
		field string
		v     float64
	}{{"kvbm_disk_read_gb_s", s.KVBMDiskReadGBs}, {"kvbm_disk_write_gb_s", s.KVBMDiskWriteGBs}} {
		if c.v != 0 && !(c.v > 0 && c.v <= sim.MaxDiskGBs) {
			errs = append(errs, inputerr.Fieldf(c.field, "%g must be in (0, %d] GB/s (0 = a PCIe Gen4 NVMe drive's)", c.v, sim.MaxDiskGBs))
		}
	}
	if m, err := sim.ParseKVBMEvents(s.KVBMKVEvents); err != nil {
		errs = append(errs, inputerr.Wrap("kvbm_kv_events", err))
	} else if rel, err := policy.ReleaseOf(s.DynamoVersion); err == nil && m == sim.KVBMEventsPassthrough && !rel.Tiers.Lower {
		// The consolidator's passthrough mode and the router's lower-tier
		// indexes came together (#8380, in v1.2.0).
		errs = append(errs, inputerr.Fieldf("kvbm_kv_events", "passthrough needs Dynamo ≥ 1.2.0 (#8380), not --dynamo-version %s, whose consolidator has only the dedup mode", rel.Version))
	}
	if s.KVOffloadingSizeGiB != 0 && (s.KVBMCPUCacheGB != 0 || s.KVBMDiskCacheGB != 0) {
		errs = append(errs, inputerr.Fieldf("kvbm_cpu_cache_gb", "KVBM and --kv-offloading-size are both vLLM KV connectors and vLLM takes one: set --kvbm-cpu-cache-gb/--kvbm-disk-cache-gb or --kv-offloading-size, not both"))
	}
	return errs
}
