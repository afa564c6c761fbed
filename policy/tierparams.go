package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Dynamo's tier credits, as parameters
// of the kv policies. Each is "" by default, the --dynamo-version's own
// value, and a run description leaves it out then, so a run without tiers
// describes itself as before.

// OptNumber is a number parameter whose unset value ("") means the
// release's default; a run description may give it as a JSON number or a
// string.
type OptNumber string

// UnmarshalJSON accepts a JSON number or string.
func (o *OptNumber) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*o = OptNumber(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a number, got %s", b)
	}
	*o = OptNumber(s)
	return nil
}

// weightOr is o as a weight, or def when o is unset (Validate has checked
// it).
func (o OptNumber) weightOr(def float64) float64 {
	if o == "" {
		return def
	}
	v, err := strconv.ParseFloat(string(o), 64)
	if err != nil {
		return def
	}
	return v
}

// checkWeight accepts "" or a number in [0, 1], the range Dynamo's
// KvRouterConfig validates (lib/kv-router/src/scheduling/config.rs
// L366-372 @c8d8e7602573).
func checkWeight(s string) error {
	if s == "" {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0 && v <= 1) {
		return fmt.Errorf("%q must be a number in [0, 1] (or empty: the --dynamo-version's default)", s)
	}
	return nil
}

// tierParamList are the parameters above, appended to ParamList.
var tierParamList = []Param{
	{Flag: "router-host-cache-hit-weight", Check: checkWeight, String: func(p *Params) *string { return (*string)(&p.RouterHostCacheHitWeight) },
		Help: "kv: credit of a block matched in a worker's host tier (Dynamo host_cache_hit_weight, a flag from v1.3; empty = the --dynamo-version's: 0.75 from v1.2, no host tier index before)"},
	{Flag: "router-disk-cache-hit-weight", Check: checkWeight, String: func(p *Params) *string { return (*string)(&p.RouterDiskCacheHitWeight) },
		Help: "kv: credit of a block matched in a worker's disk tier (Dynamo disk_cache_hit_weight; empty = 0.25 from v1.2)"},
}

// tierParams are their flags, which the kv policies read.
var tierParams = []string{"router-host-cache-hit-weight", "router-disk-cache-hit-weight"}

func init() { ParamList = append(ParamList, tierParamList...) }

// applyTierParams sets k's tier weights from p.
func (k *KV) applyTierParams(p Params) {
	k.HostWeight = p.RouterHostCacheHitWeight.weightOr(k.Release.Tiers.HostWeight)
	k.DiskWeight = p.RouterDiskCacheHitWeight.weightOr(k.Release.Tiers.DiskWeight)
}
