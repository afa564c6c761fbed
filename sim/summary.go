package sim

import (
	"math"
	"sort"
)

// Summary is a run's headline metrics. Latencies are in milliseconds and
// cover completed requests only; Completeness and the offered-TTFT
// quantiles say how much that hides.
type Summary struct {
	Offered      int            `json:"offered"`
	Completed    int            `json:"completed"`
	Rejected     map[string]int `json:"rejected"` // not completed, by status: "rejected-busy", "failed-timeout", …
	Completeness float64        `json:"completeness"`
	TTFTMs       Dist           `json:"ttft_ms"`
	TTSTMs       Dist           `json:"ttst_ms"` // time to second token
	ITLMs        Dist           `json:"itl_ms"`
	E2EMs        Dist           `json:"e2e_ms"`
	ISL          Dist           `json:"isl"`
	OSL          Dist           `json:"osl"`
	// TTFTOfferedMs holds TTFT quantiles over offered requests with every
	// rejection counted as +Inf; a quantile that lands on a rejection is
	// undefined (nil).
	TTFTOfferedMs    map[string]*float64 `json:"ttft_offered_ms"`
	DurationS        float64             `json:"duration_s"` // first arrival to last response
	RequestsPerS     float64             `json:"requests_per_s"`
	OutputTokensPerS float64             `json:"output_tokens_per_s"`
	PrefixHitRate    float64             `json:"prefix_cache_hit_rate"` // cached / looked-up prompt tokens
	Preemptions      int                 `json:"preemptions"`
	// Retries counts client re-sends; RetriedRejections the rejections
	// that were re-sent, by status (final rejections are in Rejected).
	Retries           int            `json:"retries"`
	RetriedRejections map[string]int `json:"retried_rejections"`
	// Parked counts requests that waited in the router queue;
	// RouterQueueMs is their wait.
	Parked        int  `json:"parked"`
	RouterQueueMs Dist `json:"router_queue_ms"`
	// GPU is the simulated NVML summary over the run (utilization counts
	// kernel time only; power from the profile's curve).
	GPU     GPUStats        `json:"gpu"`
	Workers []WorkerSummary `json:"workers"`
	// HostTier sums the workers' CPU KV tiers (vLLM's KV offloading;
	// nil: none).
	HostTier *HostTierSummary `json:"host_tier,omitempty"`
	// KVTiers is where the completed requests' prompt tokens came from
	// (GPU, host, disk) and the bytes each tier below the GPU moved (nil:
	// no such tier).
	KVTiers *KVTiers `json:"kv_tiers,omitempty"`
	// Uncertainty holds the model-uncertainty bands when the run drew
	// coefficient sets from its profile's posterior (--uncertainty K).
	Uncertainty *Bands `json:"uncertainty,omitempty"`
}

// WorkerSummary is one worker's share of a run.
type WorkerSummary struct {
	Requests      int     `json:"requests"`
	BusyFraction  float64 `json:"busy_fraction"` // time with a step running / makespan
	Steps         int     `json:"steps"`
	MeanBatchTok  float64 `json:"mean_batch_tokens"`
	Preemptions   int     `json:"preemptions"`
	PrefixHitRate float64 `json:"prefix_cache_hit_rate"`
	PeakKVUse     float64 `json:"peak_kv_use"` // peak blocks in use / capacity
	Evictions     int     `json:"cache_evictions"`
}

// Summarize computes a run's summary; each GPU's power comes from the
// profile its worker ran.
func Summarize(res *Result) Summary {
	s := Summary{Offered: len(res.Records), Rejected: map[string]int{}, TTFTOfferedMs: map[string]*float64{}, RetriedRejections: map[string]int{}}
	var first, last Time = math.MaxInt64, math.MinInt64
	outTokens := 0
	perWorker := make([]int, len(res.Workers))
	for i := range res.Records {
		r := &res.Records[i]
		first, last = min(first, r.Arrival), max(last, r.End)
		if r.Worker >= 0 {
			perWorker[r.Worker]++
		}
		s.Retries += len(r.Attempts)
		for _, a := range r.Attempts {
			s.RetriedRejections[a.Status.String()]++
		}
		if r.QueueNs >= 0 {
			s.Parked++
		}
		if r.Status != StatusOK {
			s.Rejected[r.Status.String()]++
			continue
		}
		s.Completed++
		outTokens += r.OutputTokens
	}
	// One buffer serves every distribution in turn, so a million requests
	// cost 8 MB here, not a slice per metric.
	buf := make([]float64, 0, len(res.Records))
	dist := func(value func(r *Record) (float64, bool)) []float64 {
		buf = buf[:0]
		for i := range res.Records {
			if v, ok := value(&res.Records[i]); ok {
				buf = append(buf, v)
			}
		}
		return buf
	}
	ok := func(r *Record) bool { return r.Status == StatusOK }
	two := func(r *Record) bool { return ok(r) && r.OutputTokens >= 2 }
	s.TTFTMs = NewDist(dist(func(r *Record) (float64, bool) { return r.TTFT().Ms(), ok(r) }))
	s.TTSTMs = NewDist(dist(func(r *Record) (float64, bool) { return (r.SecondToken - r.FirstToken).Ms(), two(r) }))
	s.ITLMs = NewDist(dist(func(r *Record) (float64, bool) { return r.ITL() / 1e6, two(r) }))
	s.E2EMs = NewDist(dist(func(r *Record) (float64, bool) { return r.E2E().Ms(), ok(r) }))
	s.ISL = NewDist(dist(func(r *Record) (float64, bool) { return float64(r.InputTokens), true }))
	s.OSL = NewDist(dist(func(r *Record) (float64, bool) { return float64(r.OutputTokens), ok(r) }))
	s.RouterQueueMs = NewDist(dist(func(r *Record) (float64, bool) { return r.QueueNs.Ms(), r.QueueNs >= 0 }))
	offered := dist(func(r *Record) (float64, bool) {
		if !ok(r) {
			return math.Inf(1), true
		}
		return r.TTFT().Ms(), true
	})
	if s.Offered > 0 {
		s.Completeness = float64(s.Completed) / float64(s.Offered)
		sort.Float64s(offered)
		for _, key := range []string{"p50", "p90", "p99"} {
			for _, p := range Percentiles {
				if p.Key == key {
					if v := Quantile7(offered, p.P); !math.IsInf(v, 1) {
						s.TTFTOfferedMs[key] = &v
					} else {
						s.TTFTOfferedMs[key] = nil
					}
				}
			}
		}
		s.DurationS = (last - first).Seconds()
	}
	if s.DurationS > 0 {
		s.RequestsPerS = float64(s.Completed) / s.DurationS
		s.OutputTokensPerS = float64(outTokens) / s.DurationS
	}
	var looked, hit int
	for i, w := range res.Workers {
		ws := WorkerSummary{Requests: perWorker[i], Steps: w.Steps, Preemptions: w.Preemptions, Evictions: w.CacheEvictions}
		if res.Makespan > 0 {
			ws.BusyFraction = float64(w.BusyNs) / float64(res.Makespan)
		}
		if w.Steps > 0 {
			ws.MeanBatchTok = float64(w.BatchedTokensSum) / float64(w.Steps)
		}
		if w.PromptTokens > 0 {
			ws.PrefixHitRate = float64(w.CachedTokens) / float64(w.PromptTokens)
		}
		if w.KVBlocks > 0 {
			ws.PeakKVUse = float64(w.PeakBlocksUsed) / float64(w.KVBlocks)
		}
		looked += w.PromptTokens
		hit += w.CachedTokens
		s.Preemptions += w.Preemptions
		s.Workers = append(s.Workers, ws)
		s.HostTier = s.HostTier.add(w.Host)
	}
	s.KVTiers = kvTiers(res)
	if looked > 0 {
		s.PrefixHitRate = float64(hit) / float64(looked)
	}
	s.GPU = res.GPUStats(func(w int, u float64) float64 {
		if w < len(res.profiles) && res.profiles[w] != nil {
			return res.profiles[w].PowerW(u)
		}
		return 0
	})
	return s
}
