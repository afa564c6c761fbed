package calib

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// The result file of `vllm bench serve --save-result` (and of the older
// benchmarks/benchmark_serving.py), as vllm/benchmarks/serve.py writes it
// at vllm-project/vllm@009e6d4a (docs/readings/bench-formats.md): one JSON
// object with the client's settings (num_prompts, request_rate — a number
// or "inf" —, burstiness, max_concurrency — a number or null —, and any
// --metadata KEY=VALUE pairs as strings), the results (duration,
// completed, failed, request_throughput, …) and, per metric of
// --percentile-metrics (default ttft,tpot,itl), mean_/median_/std_/pNN_
// <metric>_ms. --save-detailed keeps the per-request lists, in send
// order: input_lens, output_lens (0 for a failed request), ttfts and
// latencies (s), itls (per request, the gaps between chunks, s),
// start_times, errors ("" for success).

// vllmMetrics maps vLLM's per-metric keys to the statistics a fit
// compares: vLLM's TPOT, (latency − TTFT)/(output tokens − 1) per request,
// is what routesim calls a request's ITL.
var vllmMetrics = map[string]string{"ttft": "ttft_ms", "tpot": "itl_ms", "e2el": "e2e_ms"}

// vllmPercentiles are the percentile suffixes a fit compares ("median" is
// p50).
var vllmPercentiles = []string{"10", "25", "75", "90", "99"}

// ReadVLLMBench reads one `vllm bench serve` result file (at most
// inputerr.MaxDataFile bytes): one load point. Every problem names the
// file, the line of the field and the field. Lengths come from the
// per-request lists when the file has them (--save-detailed), else from
// the random dataset's settings recorded with --metadata
// (random_input_len, random_output_len, random_range_ratio); without
// either the point cannot be re-simulated and the error says so.
func ReadVLLMBench(r io.Reader, name string) (*BenchPoint, error) {
	b, err := inputerr.ReadAll(r, name, inputerr.MaxDataFile)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, errf(name, lineAt(b, se.Offset), "", "not valid JSON: %v (Python writes inf and NaN as bare Infinity/NaN, which JSON does not allow)", err)
		}
		return nil, errf(name, 1, "", "not a vllm bench serve result (a JSON object): %v", err)
	}
	v := &vllmReader{name: name, raw: raw, lines: keyLines(b)}
	p := &BenchPoint{File: name, Format: "vllm-bench", Burstiness: 1}
	if err := v.settings(p); err != nil {
		return nil, err
	}
	detailed := raw["ttfts"] != nil || raw["input_lens"] != nil
	if detailed {
		err = v.perRequest(p)
	} else {
		err = v.summary(p)
	}
	if err != nil {
		return nil, err
	}
	if p.InputLens == nil {
		if err := v.dataset(p); err != nil {
			return nil, err
		}
	}
	if vol := p.promptVolume(); vol > workload.MaxPromptVolume {
		return nil, v.errf("num_prompts", "%d prompts of %.3g tokens in all: more than %g would not fit in memory", p.Requests, vol, workload.MaxPromptVolume)
	}
	return p, nil
}

type vllmReader struct {
	name  string
	raw   map[string]json.RawMessage
	lines map[string]int
}

func (v *vllmReader) errf(field, format string, a ...any) error {
	return errf(v.name, lineOf(v.lines, field), field, format, a...)
}

// present is whether key is in the file with a value other than null.
func (v *vllmReader) present(key string) bool {
	r, ok := v.raw[key]
	return ok && string(bytes.TrimSpace(r)) != "null"
}

// number reads key as a finite number (ok false when absent or null); a
// string holding a number (a --metadata value) is accepted.
func (v *vllmReader) number(key string) (x float64, ok bool, err error) {
	if !v.present(key) {
		return 0, false, nil
	}
	r := bytes.TrimSpace(v.raw[key])
	var s string
	if json.Unmarshal(r, &s) == nil {
		r = []byte(strings.TrimSpace(s))
	}
	x, perr := strconv.ParseFloat(string(r), 64)
	if perr != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false, v.errf(key, "%s is not a finite number", r)
	}
	return x, true, nil
}

// count reads key as a whole number in [lo, hi].
func (v *vllmReader) count(key string, lo, hi float64, required bool) (int, bool, error) {
	x, ok, err := v.number(key)
	if err != nil {
		return 0, false, err
	}
	if !ok {
		if required {
			return 0, false, v.errf(key, "missing (not a vllm bench serve --save-result file?)")
		}
		return 0, false, nil
	}
	if x != math.Trunc(x) || x < lo || x > hi {
		return 0, false, v.errf(key, "%g is not a whole number in [%g, %g]", x, lo, hi)
	}
	return int(x), true, nil
}

// maxBenchRequests bounds num_prompts: ten million requests is past any
// benchmark run, and each is simulated.
const maxBenchRequests = 1e7

// settings reads how the client ran: prompts, rate, burstiness and the
// concurrency bound.
func (v *vllmReader) settings(p *BenchPoint) error {
	var err error
	if p.Requests, _, err = v.count("num_prompts", 1, maxBenchRequests, true); err != nil {
		return err
	}
	if v.present("ramp_up_strategy") {
		return v.errf("ramp_up_strategy", "a ramp-up run changes its rate as it goes; routesim re-simulates fixed-rate runs only")
	}
	var rate string
	if json.Unmarshal(v.raw["request_rate"], &rate) == nil {
		if rate != "inf" {
			return v.errf("request_rate", "%q: want a number of requests/s or \"inf\"", rate)
		}
		p.RatePerS = math.Inf(1)
	} else {
		x, ok, err := v.number("request_rate")
		switch {
		case err != nil:
			return err
		case !ok:
			return v.errf("request_rate", "missing: the client's rate (requests/s or \"inf\") is needed to re-simulate the point")
		case !(x > 0) || float64(p.Requests)/x > 7*24*3600:
			return v.errf("request_rate", "%g must be > 0 and send the %d prompts within a week", x, p.Requests)
		}
		p.RatePerS = x
	}
	if x, ok, err := v.number("burstiness"); err != nil {
		return err
	} else if ok {
		if !(x >= 0.01 && x <= 1000) {
			return v.errf("burstiness", "%g must be in [0.01, 1000] (vLLM's gamma shape; 1 = Poisson)", x)
		}
		p.Burstiness = x
	}
	p.MaxConcurrency, _, err = v.count("max_concurrency", 1, maxBenchRequests, false)
	return err
}

// summary reads the aggregate statistics of a file saved without
// --save-detailed.
func (v *vllmReader) summary(p *BenchPoint) error {
	s := Stats{}
	for metric, prefix := range vllmMetrics {
		for _, st := range append([]string{"mean", "median"}, vllmPercentiles...) {
			key, stat := st+"_"+metric+"_ms", st
			switch st {
			case "mean":
				stat = "avg"
			case "median":
				stat = "p50"
			default:
				key, stat = "p"+st+"_"+metric+"_ms", "p"+st
			}
			x, ok, err := v.number(key)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if x < 0 || x > maxMeasured {
				return v.errf(key, "%g ms is outside [0, %g]", x, maxMeasured)
			}
			s[prefix+"_"+stat] = x
		}
	}
	if _, ok := s["ttft_ms_avg"]; !ok {
		return v.errf("mean_ttft_ms", "missing (the run measured no TTFT: --percentile-metrics without ttft, or an endpoint that does not stream)")
	}
	completed, _, err := v.count("completed", 1, float64(p.Requests), true)
	if err != nil {
		return err
	}
	failed, _, err := v.count("failed", 0, float64(p.Requests-completed), false)
	if err != nil {
		return err
	}
	if failed > 0 {
		s["completeness"] = float64(completed) / float64(completed+failed)
	}
	if err := v.throughput(s, completed); err != nil {
		return err
	}
	p.Stats = keepCompared(s)
	return nil
}

// throughput sets requests_per_s: request_throughput, else completed over
// duration.
func (v *vllmReader) throughput(s Stats, completed int) error {
	x, ok, err := v.number("request_throughput")
	if err != nil {
		return err
	}
	if !ok {
		d, ok, err := v.number("duration")
		if err != nil {
			return err
		}
		if !ok || d <= 0 {
			return v.errf("request_throughput", "missing, and no positive duration to compute it from")
		}
		x = float64(completed) / d
	}
	if !(x > 0) || x > maxMeasured {
		return v.errf("request_throughput", "%g requests/s is outside (0, %g]", x, maxMeasured)
	}
	s["requests_per_s"] = x
	return nil
}

// perRequest reads the lists --save-detailed keeps; the statistics are
// computed from them with routesim's estimators.
func (v *vllmReader) perRequest(p *BenchPoint) error {
	n := p.Requests
	var isl, osl []float64
	var ttft, lat, start, queue []float64
	var itls [][]float64
	var errs []*string
	for _, l := range []struct {
		key      string
		dst      any
		required bool
	}{{"input_lens", &isl, true}, {"output_lens", &osl, true}, {"ttfts", &ttft, true}, {"itls", &itls, true},
		{"errors", &errs, true}, {"latencies", &lat, false}, {"start_times", &start, false}, {"queue_times", &queue, false}} {
		if !v.present(l.key) {
			if l.required {
				return v.errf(l.key, "missing: a --save-detailed result keeps input_lens, output_lens, ttfts, itls and errors")
			}
			continue
		}
		if err := json.Unmarshal(v.raw[l.key], l.dst); err != nil {
			return v.errf(l.key, "not a list of the expected values: %v", err)
		}
	}
	lens := map[string]int{"input_lens": len(isl), "output_lens": len(osl), "ttfts": len(ttft), "itls": len(itls), "errors": len(errs)}
	if lat != nil {
		lens["latencies"] = len(lat)
	}
	if start != nil {
		lens["start_times"] = len(start)
	}
	if queue != nil {
		lens["queue_times"] = len(queue)
	}
	for _, k := range sortedKeys(lens) {
		if lens[k] != n {
			return v.errf(k, "%d entries, but num_prompts is %d", lens[k], n)
		}
	}
	t0 := math.Inf(1)
	for _, s := range start {
		t0 = math.Min(t0, s)
	}
	p.InputLens, p.OutputLens = make([]int, n), make([]int, n)
	var ttfts, itlMs, ttst, e2e []float64
	completed := 0
	for i := 0; i < n; i++ {
		at := func(k string) string { return fmt.Sprintf("%s[%d]", k, i) }
		for _, c := range []struct {
			key string
			x   float64
			dst *int
		}{{"input_lens", isl[i], &p.InputLens[i]}, {"output_lens", osl[i], &p.OutputLens[i]}} {
			if c.x != math.Trunc(c.x) || c.x < 0 || c.x > maxTokens {
				return v.errf(at(c.key), "%g is not a token count (an integer in [0, %g])", c.x, float64(maxTokens))
			}
			*c.dst = int(c.x)
		}
		rec := Record{Line: lineOf(v.lines, "ttfts"), ISL: p.InputLens[i], OSL: p.OutputLens[i]}
		if e := errs[i]; e != nil && *e != "" {
			rec.Error = *e
			p.Records = append(p.Records, rec)
			continue
		}
		if p.InputLens[i] < 1 || p.OutputLens[i] < 1 {
			return v.errf(at("output_lens"), "%d in, %d out: a completed request has a prompt and an answer", p.InputLens[i], p.OutputLens[i])
		}
		l := ttft[i]
		for k, g := range itls[i] {
			if !(g >= 0 && g <= maxMeasured/1e3) {
				return v.errf(at("itls")+fmt.Sprintf("[%d]", k), "%g s is outside [0, %g]", g, maxMeasured/1e3)
			}
			l += g
		}
		if lat != nil {
			l = lat[i]
		}
		if !(ttft[i] >= 0 && ttft[i] <= l && l <= maxMeasured/1e3) {
			return v.errf(at("ttfts"), "%g s with latency %g s: want 0 ≤ TTFT ≤ latency ≤ %g s", ttft[i], l, maxMeasured/1e3)
		}
		completed++
		rec.TTFTMs, rec.LatencyMs = ttft[i]*1e3, l*1e3
		ttfts, e2e = append(ttfts, rec.TTFTMs), append(e2e, rec.LatencyMs)
		if rec.OSL >= 2 {
			rec.ITLMs = (l - ttft[i]) / float64(rec.OSL-1) * 1e3
			itlMs = append(itlMs, rec.ITLMs)
			if len(itls[i]) > 0 {
				rec.TTSTMs = itls[i][0] * 1e3
				ttst = append(ttst, rec.TTSTMs)
			}
		}
		if start != nil {
			rec.StartNs = int64(math.Round((start[i] - t0) * 1e9))
			rec.EndNs = rec.StartNs + int64(math.Round(l*1e9))
		}
		p.Records = append(p.Records, rec)
	}
	if completed == 0 {
		return v.errf("errors", "every request failed: nothing to fit")
	}
	if err := v.sendTimes(p, start, queue, lat); err != nil {
		return err
	}
	s := Stats{}
	addDist(s, "ttft_ms", sim.NewDist(ttfts))
	addDist(s, "itl_ms", sim.NewDist(itlMs))
	addDist(s, "ttst_ms", sim.NewDist(ttst))
	addDist(s, "e2e_ms", sim.NewDist(e2e))
	if completed < n {
		s["completeness"] = float64(completed) / float64(n)
	}
	if err := v.throughput(s, completed); err != nil {
		return err
	}
	p.Stats = keepCompared(s)
	return nil
}

// sendTimes recovers when the client meant to send each request, in
// seconds from the benchmark's start, when the file saves enough: a
// request's start_time is when it was sent, after waiting queue_times for
// a concurrency slot, and the benchmark's start is duration before the
// last request's end. A file without start_times, or with a concurrency
// bound but without queue_times, leaves the times to be drawn from the
// rate.
func (v *vllmReader) sendTimes(p *BenchPoint, start, queue, lat []float64) error {
	if start == nil || lat == nil || (p.MaxConcurrency > 0 && queue == nil) {
		return nil
	}
	d, ok, err := v.number("duration")
	if err != nil || !ok {
		return err
	}
	end := math.Inf(-1)
	for i, s := range start {
		l := 0.0
		if lat != nil {
			l = lat[i]
		}
		end = math.Max(end, s+l)
	}
	t0 := end - d
	p.SendS = make([]float64, len(start))
	for i, s := range start {
		if queue != nil {
			if !(queue[i] >= 0 && queue[i] <= maxMeasured/1e3) {
				return v.errf(fmt.Sprintf("queue_times[%d]", i), "%g s is outside [0, %g]", queue[i], maxMeasured/1e3)
			}
			s -= queue[i]
		}
		if !(s-t0 >= -1e-3 && s-t0 <= 7*24*3600) {
			return v.errf(fmt.Sprintf("start_times[%d]", i), "%g s is %g s from the benchmark's start (duration %g s before the last end): want within a week after it", s, s-t0, d)
		}
		p.SendS[i] = math.Max(s-t0, 0)
	}
	return nil
}

// dataset reads the random dataset's settings from --metadata pairs.
func (v *vllmReader) dataset(p *BenchPoint) error {
	if v.present("dataset_name") {
		var name string
		if json.Unmarshal(v.raw["dataset_name"], &name) != nil || name != "random" {
			return v.errf("dataset_name", "%s: only the random dataset's lengths can be re-drawn; save the run with --save-detailed", bytes.TrimSpace(v.raw["dataset_name"]))
		}
	}
	in, okIn, err := v.count("random_input_len", 1, maxTokens, false)
	if err != nil {
		return err
	}
	out, okOut, err := v.count("random_output_len", 1, maxTokens, false)
	if err != nil {
		return err
	}
	if !okIn || !okOut {
		return v.errf("input_lens", "missing: the file has neither per-request lengths nor the dataset's; "+
			"re-run vllm bench serve with --save-detailed, or record the random dataset's settings with "+
			"--metadata random_input_len=N random_output_len=M random_range_ratio=R")
	}
	r, _, err := v.number("random_range_ratio")
	if err != nil {
		return err
	}
	if !(r >= 0 && r < 1) {
		return v.errf("random_range_ratio", "%g must be in [0, 1) (vLLM's own bound)", r)
	}
	p.Dataset = &RandomDataset{InputLen: in, OutputLen: out, RangeRatio: r}
	return nil
}
