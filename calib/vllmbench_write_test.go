package calib

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/routesim/routesim/sim"
)

// vllmRun is what a simulated `vllm bench serve` run needs to be written
// as vLLM writes its result: the client's settings and each request's
// scheduled send time.
type vllmRun struct {
	Point     *BenchPoint
	Scheduled []float64   // seconds from the benchmark's start, per request
	Metadata  [][2]string // --metadata KEY=VALUE pairs, in order
	Detailed  bool        // --save-detailed
}

// perfBase is where the fake perf_counter clock of written start_times
// stands at the benchmark's start.
const perfBase = 5021.25

// writeVLLMBench writes res as `vllm bench serve --save-result` does at
// vllm-project/vllm@009e6d4a (vllm/benchmarks/serve.py: main's result_json
// merged with benchmark()'s result, and without --save-detailed the
// per-request lists it deletes): the same keys in the same order, default
// --percentile-metrics ttft,tpot,itl and --metric-percentiles 99. The
// simulator keeps a request's first, second and last token times only, so
// its itls list spreads the gaps after the second token evenly.
func writeVLLMBench(w io.Writer, run vllmRun, res *sim.Result) error {
	p := run.Point
	var kv []any // key, value, key, value, …
	add := func(k string, v any) { kv = append(kv, k, v) }
	add("date", "20260605-215830")
	add("endpoint_type", "openai")
	add("backend", "openai")
	add("label", nil)
	add("model_id", "Qwen/Qwen3-8B")
	add("tokenizer_id", "Qwen/Qwen3-8B")
	add("num_prompts", p.Requests)
	for _, m := range run.Metadata {
		add(m[0], m[1])
	}
	if math.IsInf(p.RatePerS, 1) {
		add("request_rate", "inf")
	} else {
		add("request_rate", p.RatePerS)
	}
	add("burstiness", p.Burstiness)
	if p.MaxConcurrency > 0 {
		add("max_concurrency", p.MaxConcurrency)
	} else {
		add("max_concurrency", nil)
	}
	n := len(res.Records)
	inputLens, outputLens := make([]int, n), make([]int, n)
	ttfts, lats, starts, queues := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	itls, texts, errs := make([][]float64, n), make([]string, n), make([]string, n)
	var okTTFT, okTPOT, allITL, okE2E, queueOK, e2eQueue []float64
	var dur float64
	completed, totalIn, totalOut := 0, 0, 0
	for i := range res.Records {
		r := &res.Records[i]
		sent := float64(r.Arrival) / 1e9
		inputLens[i], starts[i], queues[i] = r.InputTokens, perfBase+sent, sent-run.Scheduled[i]
		itls[i] = []float64{}
		dur = math.Max(dur, float64(r.End)/1e9)
		if r.Status != sim.StatusOK {
			errs[i] = "HTTP " + strconv.Itoa(r.HTTPCode)
			continue
		}
		completed++
		outputLens[i] = r.OutputTokens
		totalIn, totalOut = totalIn+r.InputTokens, totalOut+r.OutputTokens
		ttfts[i], lats[i] = float64(r.TTFT())/1e9, float64(r.E2E())/1e9
		if r.OutputTokens >= 2 {
			itls[i] = append(itls[i], float64(r.SecondToken-r.FirstToken)/1e9)
			for k := 2; k < r.OutputTokens; k++ {
				itls[i] = append(itls[i], float64(r.End-r.SecondToken)/1e9/float64(r.OutputTokens-2))
			}
			okTPOT = append(okTPOT, (lats[i]-ttfts[i])/float64(r.OutputTokens-1))
		}
		okTTFT, okE2E, allITL = append(okTTFT, ttfts[i]), append(okE2E, lats[i]), append(allITL, itls[i]...)
		queueOK, e2eQueue = append(queueOK, queues[i]), append(e2eQueue, lats[i]+queues[i])
	}
	add("duration", dur)
	add("completed", completed)
	add("failed", n-completed)
	add("total_input_tokens", totalIn)
	add("total_output_tokens", totalOut)
	add("request_throughput", float64(completed)/dur)
	add("request_goodput", nil)
	add("output_throughput", float64(totalOut)/dur)
	add("total_token_throughput", float64(totalIn+totalOut)/dur)
	if run.Detailed {
		add("input_lens", inputLens)
		add("output_lens", outputLens)
		add("ttfts", ttfts)
		add("itls", itls)
	}
	add("latencies", lats)
	if run.Detailed {
		add("start_times", starts)
	}
	add("queue_times", queues)
	if run.Detailed {
		add("generated_texts", texts)
		add("errors", errs)
	}
	peakTok, peakConc := peaks(res, itls)
	add("max_output_tokens_per_s", peakTok)
	add("max_concurrent_requests", peakConc)
	add("rtfx", 0.0)
	metric := func(name string, xs []float64) {
		mean, med, std, p99 := npStats(xs)
		add("mean_"+name+"_ms", mean*1e3)
		add("median_"+name+"_ms", med*1e3)
		add("std_"+name+"_ms", std*1e3)
		add("p99_"+name+"_ms", p99*1e3)
	}
	metric("ttft", okTTFT)
	metric("tpot", okTPOT)
	metric("itl", allITL)
	if p.MaxConcurrency > 0 {
		metric("client_queue_time", queueOK)
		if !math.IsInf(p.RatePerS, 1) {
			metric("e2el_including_client_queue", e2eQueue)
		}
	}
	return writeOrdered(w, kv)
}

// writeOrdered writes key/value pairs as one JSON object in their order,
// as Python's json.dump does: ", " and ": " separators, floats in repr
// form (1.0, 0.1, 1e-05).
func writeOrdered(w io.Writer, kv []any) error {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		pyJSON(&b, kv[i])
		b.WriteString(": ")
		pyJSON(&b, kv[i+1])
	}
	b.WriteByte('}')
	_, err := w.Write(b.Bytes())
	return err
}

// pyJSON writes v as Python's json module would.
func pyJSON(b *bytes.Buffer, v any) {
	list := func(n int, item func(int)) {
		b.WriteByte('[')
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			item(i)
		}
		b.WriteByte(']')
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		s, _ := json.Marshal(x)
		b.Write(s)
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		b.WriteString(pyFloat(x))
	case []int:
		list(len(x), func(i int) { pyJSON(b, x[i]) })
	case []float64:
		list(len(x), func(i int) { pyJSON(b, x[i]) })
	case [][]float64:
		list(len(x), func(i int) { pyJSON(b, x[i]) })
	case []string:
		list(len(x), func(i int) { pyJSON(b, x[i]) })
	default:
		panic(fmt.Sprintf("pyJSON: %T", v))
	}
}

// pyFloat is Python's repr of a float: the shortest digits, positional
// from 1e-4 to 1e16 (with ".0" when whole), else in exponent form.
func pyFloat(x float64) string {
	if a := math.Abs(x); a == 0 || (a >= 1e-4 && a < 1e16) {
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return strconv.FormatFloat(x, 'e', -1, 64) // two exponent digits at least, as Python
}

// npStats are numpy's mean, median, std (ddof 0) and 99th percentile
// (linear interpolation) of xs, each 0 for an empty list as vLLM's
// `xs or 0` makes them.
func npStats(xs []float64) (mean, med, std, p99 float64) {
	if len(xs) == 0 {
		return 0, 0, 0, 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	for _, x := range s {
		mean += x / float64(len(s))
	}
	for _, x := range s {
		std += (x - mean) * (x - mean) / float64(len(s))
	}
	return mean, sim.Quantile7(s, 0.5), math.Sqrt(std), sim.Quantile7(s, 0.99)
}

// peaks are vLLM's max_output_tokens_per_s (tokens in the busiest
// one-second bucket from the first successful start) and
// max_concurrent_requests (the most successful requests in flight).
func peaks(res *sim.Result, itls [][]float64) (float64, int) {
	first := math.Inf(1)
	var ok []int
	for i := range res.Records {
		if res.Records[i].Status == sim.StatusOK {
			ok = append(ok, i)
			first = math.Min(first, float64(res.Records[i].Arrival)/1e9)
		}
	}
	if len(ok) == 0 {
		return 0, 0
	}
	buckets := map[int]float64{}
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	for _, i := range ok {
		r := &res.Records[i]
		t := float64(r.FirstToken) / 1e9
		buckets[int(t-first)]++
		for _, g := range itls[i] {
			t += g
			buckets[int(t-first)]++
		}
		evs = append(evs, ev{float64(r.Arrival) / 1e9, 1}, ev{float64(r.End) / 1e9, -1})
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return evs[a].d < evs[b].d
	})
	peak, cur := 0, 0
	for _, e := range evs {
		cur += e.d
		peak = max(peak, cur)
	}
	top := 0.0
	for _, v := range buckets {
		top = math.Max(top, v)
	}
	return top, peak
}
