package policy

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// The tier parameters: empty by default, and then absent from a run
// description (so one without tiers reads as before); set, they override
// the release's weights (0.75 / 0.25, scheduling/config.rs L38-44
// @c8d8e7602573). KVBM's consolidator mode is no router parameter: it is
// the worker's (sim.KVBMEvents), and the router reads the mediums it gets.
func TestTierParams(t *testing.T) {
	b, err := json.Marshal(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cache_hit_weight", "consolidator"} {
		if strings.Contains(string(b), k) {
			t.Errorf("default params mention %s: %s", k, b)
		}
	}
	var p Params
	if err := json.Unmarshal([]byte(`{"router_host_cache_hit_weight": 0.5, "router_disk_cache_hit_weight": "0.1"}`), &p); err != nil {
		t.Fatal(err)
	}
	d := DefaultParams()
	d.RouterHostCacheHitWeight, d.RouterDiskCacheHitWeight = p.RouterHostCacheHitWeight, p.RouterDiskCacheHitWeight
	d.Rand = rand.New(rand.NewPCG(1, 1))
	pol, err := New("kv", d)
	if err != nil {
		t.Fatal(err)
	}
	if tr := pol.(*KV).TierReading(); tr.HostWeight != 0.5 || tr.DiskWeight != 0.1 || !tr.Lower || tr.MediumIgnored {
		t.Errorf("reading %+v, want weights 0.5 / 0.1 on lower-tier indexes", tr)
	}
	def := DefaultParams()
	def.Rand = d.Rand
	pol, _ = New("kv", def)
	if tr := pol.(*KV).TierReading(); tr.HostWeight != 0.75 || tr.DiskWeight != 0.25 || !tr.Lower || tr.NativeCPU != CPURemovesDevice {
		t.Errorf("v1.2's default reading %+v", tr)
	}
	def.DynamoVersion = "0.9.0"
	pol, _ = New("kv", def)
	if tr := pol.(*KV).TierReading(); tr.Lower || !tr.MediumIgnored || tr.NativeCPU != CPURemovesDevice {
		t.Errorf("v0.9's reading %+v, want one index, the medium ignored", tr)
	}
	for _, bad := range []Params{{RouterHostCacheHitWeight: "1.5"}, {RouterDiskCacheHitWeight: "x"}} {
		q := DefaultParams()
		q.RouterHostCacheHitWeight, q.RouterDiskCacheHitWeight = bad.RouterHostCacheHitWeight, bad.RouterDiskCacheHitWeight
		if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "policy_params.") {
			t.Errorf("%+v: error %v, want one naming the field", bad, err)
		}
	}
}

// FuzzTierParams: any JSON value of a weight decodes or errs without a
// panic; a weight Validate accepts is in [0, 1].
func FuzzTierParams(f *testing.F) {
	for _, s := range []string{`0.5`, `"0.25"`, `""`, `-1`, `"1e309"`, `null`, `[1]`, `"NaN"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var o OptNumber
		if json.Unmarshal([]byte(s), &o) != nil {
			return
		}
		p := DefaultParams()
		p.RouterHostCacheHitWeight = o
		if p.Validate() == nil {
			if w := o.weightOr(0.75); !(w >= 0 && w <= 1) {
				t.Errorf("%q accepted as weight %g", s, w)
			}
		}
	})
}
