package policy

import (
	"errors"
	"math"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
)

// TestParamsBoundedBeforeConversion: parameters converted to nanoseconds
// or multiplied into token counts are bounded where they are validated,
// so no conversion wraps (an LRU of −16 tokens became one block; an
// interval of 1e300 s became a negative one); each error names its field.
func TestParamsBoundedBeforeConversion(t *testing.T) {
	for _, tc := range []struct {
		field string
		set   func(p *Params)
	}{
		{"policy_params.eviction_interval", func(p *Params) { p.EvictionInterval = 1e300 }},
		{"policy_params.request_stats_window", func(p *Params) { p.RequestStatsWindow = 1e300 }},
		{"policy_params.lru_capacity_per_server", func(p *Params) { p.LRUCapacityPerServer = math.MaxInt }},
		{"policy_params.max_prefix_blocks_to_match", func(p *Params) { p.MaxPrefixBlocksToMatch = math.MaxInt }},
		{"policy_params.prefix_cache_block_number", func(p *Params) { p.PrefixCacheBlockNumber = math.MaxInt }},
		{"policy_params.scorers", func(p *Params) { p.Scorers = "queue:1e308,kv-cache-utilization:1e308" }},
	} {
		p := DefaultParams()
		tc.set(&p)
		var fe *inputerr.FieldError
		if err := p.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want an error naming it", tc.field, err)
		}
	}
	// The bounds themselves are accepted.
	p := DefaultParams()
	p.EvictionInterval, p.RequestStatsWindow = 365*24*3600, 365*24*3600
	p.LRUCapacityPerServer, p.MaxPrefixBlocksToMatch, p.PrefixCacheBlockNumber = 1<<36, 1<<36, 1<<36
	p.Scorers = "queue:1e6,kv-cache-utilization:1e6,prefix-cache:0"
	if err := p.Validate(); err != nil {
		t.Errorf("parameters at their bounds: %v", err)
	}
}

// TestSubNanosecondIntervalIsNotOff: a positive eviction interval below the
// clock's nanosecond is one nanosecond (evict at every request), not 0
// (never evict).
func TestSubNanosecondIntervalIsNotOff(t *testing.T) {
	p := DefaultParams()
	p.Rand = testRand(1)
	for _, tc := range []struct {
		s    float64
		want int64
	}{{0, 0}, {4e-10, 1}, {1e-300, 1}, {1.6e-9, 2}, {120, 120e9}} {
		p.EvictionInterval = tc.s
		pol, err := New("sglang-cache-aware", p)
		if err != nil {
			t.Fatal(err)
		}
		if got := pol.(*SGLangCacheAware).EvictionInterval; got != tc.want {
			t.Errorf("eviction-interval %g s: %d ns, want %d", tc.s, got, tc.want)
		}
	}
}
