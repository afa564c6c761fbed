package sweep

import (
	"slices"
	"testing"

	"github.com/routesim/routesim/sim"
)

// TestRequestTableTierColumns: a sweep's requests.parquet has the
// cached_{gpu,host,disk}_tokens columns when its runs have a KV tier below
// the GPU, and not otherwise, and they split cached_tokens.
func TestRequestTableTierColumns(t *testing.T) {
	rec := sim.Record{Worker: 0, InputTokens: 100, CachedTokens: 64, CachedHostTokens: 48, Status: sim.StatusOK}
	for _, tiered := range []bool{false, true} {
		r := Result{Point: Point{N: 1, Policy: "kv"}, Records: []sim.Record{rec}}
		if tiered {
			r.Summary.KVTiers = &sim.KVTiers{}
		}
		cols := requestColumns(&Manifest{}, []Result{r})
		value := map[string]int64{}
		for _, c := range cols {
			if len(c.Ints) == 1 {
				value[c.Name] = c.Ints[0]
			}
		}
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		if got := slices.Contains(names, "cached_host_tokens"); got != tiered {
			t.Errorf("tiered=%v: columns %v", tiered, names)
		}
		if tiered && (value["cached_gpu_tokens"] != 16 || value["cached_host_tokens"] != 48 || value["cached_disk_tokens"] != 0) {
			t.Errorf("tier columns %v", value)
		}
	}
}
