package calib

import (
	"math"
	"sort"

	"github.com/routesim/routesim/sim"
)

// Stats are named statistics of a run: latencies in ms, throughput in
// requests/s, GPU utilization in 0..1.
type Stats map[string]float64

// statWeights are the statistics a fit compares, with their weights in the
// loss Σ w·log(sim/measured)². Latency percentiles from the body and tail
// of each distribution, the means, throughput and NVML utilization; the
// headline figures (TTFT p50 and mean, ITL mean, throughput, utilization)
// count four times.
var statWeights = map[string]float64{
	"ttft_ms_avg": 4, "ttft_ms_p10": 0.5, "ttft_ms_p25": 0.5, "ttft_ms_p50": 4, "ttft_ms_p75": 0.5, "ttft_ms_p90": 1, "ttft_ms_p99": 0.25,
	"itl_ms_avg": 4, "itl_ms_p10": 0.5, "itl_ms_p50": 1, "itl_ms_p90": 0.5,
	"ttst_ms_p50": 0.25, "e2e_ms_avg": 0.5, "e2e_ms_p50": 0.5, "e2e_ms_p90": 0.25,
	"requests_per_s": 4, "gpu_util_mean": 4, "completeness": 4,
}

// statOrder lists statistics in report order.
var statOrder = []string{"ttft_ms_avg", "ttft_ms_p10", "ttft_ms_p25", "ttft_ms_p50", "ttft_ms_p75", "ttft_ms_p90", "ttft_ms_p99",
	"itl_ms_avg", "itl_ms_p10", "itl_ms_p50", "itl_ms_p90", "ttst_ms_p50", "e2e_ms_avg", "e2e_ms_p50", "e2e_ms_p90",
	"requests_per_s", "gpu_util_mean", "completeness"}

func addDist(s Stats, prefix string, d sim.Dist) {
	if d.Count == 0 {
		return
	}
	s[prefix+"_avg"] = d.Avg
	for i, p := range sim.Percentiles {
		s[prefix+"_"+p.Key] = d.P[i]
	}
}

// measuredStats computes a run's statistics, from per-request records
// when present (with AIPerf's estimators), else from its summary.
func measuredStats(o *Observed) Stats {
	s := Stats{}
	if o.Derived != nil {
		for k, v := range o.Derived {
			s[k] = v
		}
	} else if len(o.Records) > 0 {
		var ttft, itl, ttst, e2e []float64
		first, last := int64(math.MaxInt64), int64(math.MinInt64)
		ok := 0
		for _, r := range o.Records {
			first, last = min(first, r.StartNs), max(last, r.EndNs)
			if r.Error != "" {
				continue
			}
			ok++
			ttft = append(ttft, r.TTFTMs)
			e2e = append(e2e, r.LatencyMs)
			if r.OSL >= 2 {
				itl = append(itl, r.ITLMs)
				ttst = append(ttst, r.TTSTMs)
			}
		}
		addDist(s, "ttft_ms", sim.NewDist(ttft))
		addDist(s, "itl_ms", sim.NewDist(itl))
		addDist(s, "ttst_ms", sim.NewDist(ttst))
		addDist(s, "e2e_ms", sim.NewDist(e2e))
		if last > first {
			s["requests_per_s"] = float64(ok) / (float64(last-first) / 1e9)
		}
		// Completeness is compared only when some requests failed: a run
		// that served everything pins nothing with it (every candidate
		// that serves everything matches), and a constant residual would
		// only dilute the others.
		if ok > 0 && ok < len(o.Records) {
			s["completeness"] = float64(ok) / float64(len(o.Records))
		}
	} else if o.Summary != nil {
		for metric, prefix := range map[string]string{"time_to_first_token": "ttft_ms", "inter_token_latency": "itl_ms",
			"time_to_second_token": "ttst_ms", "request_latency": "e2e_ms"} {
			if m, ok := o.Summary.Metrics[metric]; ok {
				for k, v := range m.Stats {
					s[prefix+"_"+k] = v
				}
			}
		}
		s["requests_per_s"], _ = o.Summary.Stat("request_throughput", "avg")
	}
	if o.GPU != nil {
		s["gpu_util_mean"] = o.GPU.UtilMean()
	}
	return keepCompared(s)
}

// simulatedStats computes the same statistics from a simulated run (its
// GPU sampler spans the arm's NVML window: buildArms sets it).
func simulatedStats(res *sim.Result) Stats {
	sum := sim.Summarize(res)
	s := Stats{}
	addDist(s, "ttft_ms", sum.TTFTMs)
	addDist(s, "itl_ms", sum.ITLMs)
	addDist(s, "ttst_ms", sum.TTSTMs)
	addDist(s, "e2e_ms", sum.E2EMs)
	s["requests_per_s"] = sum.RequestsPerS
	s["completeness"] = sum.Completeness
	s["gpu_util_mean"] = sum.GPU.UtilMean
	return keepCompared(s)
}

func keepCompared(s Stats) Stats {
	for k := range s {
		if _, ok := statWeights[k]; !ok {
			delete(s, k)
		}
	}
	return s
}

// meanStats averages repetitions; spread is their relative std per stat.
func meanStats(reps []Stats) (mean, spread Stats) {
	mean, spread = Stats{}, Stats{}
	keys := map[string]bool{}
	for _, r := range reps {
		for k := range r {
			keys[k] = true
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		var xs []float64
		for _, r := range reps {
			if v, ok := r[k]; ok {
				xs = append(xs, v)
			}
		}
		if len(xs) < len(reps) {
			continue // compare only what every repetition measured
		}
		m := 0.0
		for _, x := range xs {
			m += x / float64(len(xs))
		}
		v := 0.0
		for _, x := range xs {
			v += (x - m) * (x - m) / float64(len(xs))
		}
		mean[k] = m
		if m > 0 && len(xs) > 1 {
			spread[k] = math.Sqrt(v) / m
		}
	}
	return mean, spread
}
