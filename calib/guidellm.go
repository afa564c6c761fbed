package calib

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// A GuideLLM report (GenerativeBenchmarksReport, saved as JSON by
// `guidellm benchmark --output-path …json`; vllm-project/guidellm@v0.7.3,
// src/guidellm/benchmark/schemas/report.py) holds one benchmark per load
// point under "benchmarks". routesim reads, per benchmark: config.strategy
// (scheduler/strategies.py: type_ synchronous, concurrent with streams,
// throughput, constant or poisson with rate, each with an optional
// max_concurrency and rampup_duration), config.warmup and config.cooldown
// (TransientPhaseConfig: percent, value), the request counts of
// metrics.request_latency (successful/errored/incomplete .count), and the
// per-request lists requests.successful/errored/incomplete
// (GenerativeRequestStats, schemas/request_stats.py, with its computed
// fields: prompt_tokens, output_tokens, time_to_first_token_ms,
// inter_token_latency_ms, request_latency in s, request_start_time and
// request_end_time in Unix s). The YAML form is not read.

// guidellmRequest is the part of a GenerativeRequestStats routesim reads.
type guidellmRequest struct {
	PromptTokens *float64 `json:"prompt_tokens"`
	OutputTokens *float64 `json:"output_tokens"`
	TTFTMs       *float64 `json:"time_to_first_token_ms"`
	ITLMs        *float64 `json:"inter_token_latency_ms"`
	Latency      *float64 `json:"request_latency"`
	Start        *float64 `json:"request_start_time"`
	End          *float64 `json:"request_end_time"`
}

type guidellmStrategy struct {
	Type           string   `json:"type_"`
	Streams        *float64 `json:"streams"`
	Rate           *float64 `json:"rate"`
	MaxConcurrency *float64 `json:"max_concurrency"`
	Rampup         *float64 `json:"rampup_duration"`
}

type guidellmPhase struct {
	Percent *float64 `json:"percent"`
	Value   *float64 `json:"value"`
}

type guidellmBenchmark struct {
	Config struct {
		Strategy *guidellmStrategy `json:"strategy"`
		Warmup   *guidellmPhase    `json:"warmup"`
		Cooldown *guidellmPhase    `json:"cooldown"`
	} `json:"config"`
	Metrics struct {
		RequestLatency map[string]*struct {
			Count *float64 `json:"count"`
		} `json:"request_latency"`
	} `json:"metrics"`
	Requests map[string][]guidellmRequest `json:"requests"`
}

// guidellmStatuses are the request lists of a benchmark, in the order
// GuideLLM's StatusBreakdown names them.
var guidellmStatuses = []string{"successful", "errored", "incomplete"}

// GuideLLMPoint is one benchmark of a report: its label (the strategy, as
// GuideLLM prints it: "constant@2.00") and its load point.
type GuideLLMPoint struct {
	Label string
	Point *BenchPoint
}

// ReadGuideLLM reads a GuideLLM JSON report (at most
// inputerr.MaxDataFile bytes): one load point per benchmark. Every
// problem names the file, the line and the field
// ("benchmarks[2].config.strategy.rate"). A benchmark is re-simulated as
// its strategy ran: synchronous as one request at a time, concurrent@N
// as N streams (a request sent as soon as one of the stream's ends),
// throughput as every request at t = 0 (within max_concurrency, if set),
// constant@r at k/r for the k-th request, poisson@r at exponential gaps
// of mean 1/r (a draw of routesim's, not GuideLLM's seeded one); lengths
// are the per-request lists', which must hold every request (a report
// saved with --sample-requests keeps a sample and is refused).
func ReadGuideLLM(r io.Reader, name string) ([]GuideLLMPoint, error) {
	b, err := inputerr.ReadAll(r, name, inputerr.MaxDataFile)
	if err != nil {
		return nil, err
	}
	lines := keyLines(b)
	var rep struct {
		Benchmarks []json.RawMessage `json:"benchmarks"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, errf(name, lineAt(b, se.Offset), "", "not valid JSON: %v (the YAML form of a report is not read: save it as .json)", err)
		case errors.As(err, &te):
			return nil, errf(name, lineAt(b, te.Offset), te.Field, "%v", err)
		}
		return nil, errf(name, 1, "", "not a GuideLLM report: %v", err)
	}
	if len(rep.Benchmarks) == 0 {
		return nil, errf(name, lineOf(lines, "benchmarks"), "benchmarks", "missing or empty: not a GuideLLM report with results")
	}
	var out []GuideLLMPoint
	for i, raw := range rep.Benchmarks {
		at := fmt.Sprintf("benchmarks[%d]", i)
		fail := func(field, format string, a ...any) error {
			return errf(name, lineOf(lines, at+"."+field), at+"."+field, format, a...)
		}
		var bm guidellmBenchmark
		if err := json.Unmarshal(raw, &bm); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, fail(te.Field, "%v", err)
			}
			return nil, errf(name, lineOf(lines, at), at, "%v", err)
		}
		gp, err := guidellmPoint(&bm, name, fail)
		if err != nil {
			return nil, err
		}
		out = append(out, gp)
	}
	return out, nil
}

// guidellmPoint builds one benchmark's load point.
func guidellmPoint(bm *guidellmBenchmark, name string, fail func(string, string, ...any) error) (GuideLLMPoint, error) {
	var gp GuideLLMPoint
	st := bm.Config.Strategy
	if st == nil {
		return gp, fail("config.strategy", "missing: how the benchmark sent its requests")
	}
	for _, ph := range []struct {
		field string
		p     *guidellmPhase
	}{{"config.warmup", bm.Config.Warmup}, {"config.cooldown", bm.Config.Cooldown}} {
		if ph.p != nil && ((ph.p.Percent != nil && *ph.p.Percent > 0) || (ph.p.Value != nil && *ph.p.Value > 0)) {
			return gp, fail(ph.field, "set: a benchmark measured inside a warm-up or cool-down window is not re-simulated; run it without --warmup/--cooldown")
		}
	}
	p := &BenchPoint{File: name, Format: "guidellm", RatePerS: math.Inf(1), Burstiness: 1}
	positive := func(field string, v *float64, whole bool) (float64, error) {
		if v == nil {
			return 0, fail("config.strategy."+field, "missing for a %s strategy", st.Type)
		}
		if !(*v > 0) || *v > maxBenchRequests || (whole && *v != math.Trunc(*v)) {
			return 0, fail("config.strategy."+field, "%g must be a positive number ≤ %g%s", *v, float64(maxBenchRequests), map[bool]string{true: " and whole"}[whole])
		}
		return *v, nil
	}
	if st.Rampup != nil && *st.Rampup > 0 {
		return gp, fail("config.strategy.rampup_duration", "%g s: a ramp-up is not re-simulated", *st.Rampup)
	}
	if st.MaxConcurrency != nil {
		c, err := positive("max_concurrency", st.MaxConcurrency, true)
		if err != nil {
			return gp, err
		}
		p.MaxConcurrency = int(c)
	}
	switch st.Type {
	case "synchronous":
		p.MaxConcurrency, gp.Label = 1, "synchronous"
	case "concurrent":
		n, err := positive("streams", st.Streams, true)
		if err != nil {
			return gp, err
		}
		p.MaxConcurrency, gp.Label = int(n), fmt.Sprintf("concurrent@%d", int(n))
	case "throughput":
		gp.Label = "throughput"
	case "constant", "poisson":
		r, err := positive("rate", st.Rate, false)
		if err != nil {
			return gp, err
		}
		p.RatePerS, gp.Label = r, fmt.Sprintf("%s@%.2f", st.Type, r)
	default:
		return gp, fail("config.strategy.type_", "%q: routesim re-simulates synchronous, concurrent, throughput, constant and poisson strategies", st.Type)
	}
	var reqs []guidellmRequest
	var status []string
	for _, k := range guidellmStatuses {
		listed := len(bm.Requests[k])
		if m := bm.Metrics.RequestLatency[k]; m != nil && m.Count != nil && float64(listed) < *m.Count {
			return gp, fail("requests."+k, "%d requests listed of the %g measured: the report keeps a sample (--sample-requests); re-run keeping every request", listed, *m.Count)
		}
		reqs = append(reqs, bm.Requests[k]...)
		for range bm.Requests[k] {
			status = append(status, k)
		}
	}
	if len(reqs) == 0 {
		return gp, fail("requests", "no requests listed: the per-request lists give the lengths to re-simulate")
	}
	if len(reqs) > maxBenchRequests {
		return gp, fail("requests", "%d requests: more than %g", len(reqs), float64(maxBenchRequests))
	}
	idx := make([]int, len(reqs))
	for i := range idx {
		idx[i] = i
	}
	for i, q := range reqs {
		if q.Start == nil || math.IsNaN(*q.Start) || math.IsInf(*q.Start, 0) {
			return gp, fail(fmt.Sprintf("requests.%s.request_start_time", status[i]), "missing or not finite")
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return *reqs[idx[a]].Start < *reqs[idx[b]].Start })
	stats, err := guidellmStats(p, reqs, status, idx, fail)
	if err != nil {
		return gp, err
	}
	p.Stats, p.Requests = stats, len(reqs)
	if p.RatePerS < math.Inf(1) && st.Type == "constant" {
		p.SendS = make([]float64, p.Requests)
		for k := range p.SendS {
			p.SendS[k] = float64(k+1) / p.RatePerS // GuideLLM's k-th request, k from 1
		}
	}
	if p.RatePerS < math.Inf(1) && float64(p.Requests)/p.RatePerS > 7*24*3600 {
		return gp, fail("config.strategy.rate", "%g: %d requests would take more than a week", p.RatePerS, p.Requests)
	}
	if st.Type == "poisson" {
		p.NoRescale = true
	}
	if vol := p.promptVolume(); vol > workload.MaxPromptVolume {
		return gp, fail("requests", "%.3g prompt tokens in all: more than %g would not fit in memory", vol, workload.MaxPromptVolume)
	}
	gp.Point = p
	return gp, nil
}

// guidellmStats reads every request's lengths (in send order) and the
// successful ones' latencies, computing the statistics a fit compares.
func guidellmStats(p *BenchPoint, reqs []guidellmRequest, status []string, idx []int, fail func(string, string, ...any) error) (Stats, error) {
	var ttft, itl, e2e []float64
	first, last := math.Inf(1), math.Inf(-1)
	ok := 0
	for _, i := range idx {
		q := reqs[i]
		at := "requests." + status[i] + "[" + strconv.Itoa(countBefore(status, i)) + "]."
		tokens := func(field string, v *float64, required bool) (int, error) {
			if v == nil {
				if required {
					return 0, fail(at+field, "missing")
				}
				return 0, nil
			}
			if *v != math.Trunc(*v) || *v < 0 || *v > maxTokens {
				return 0, fail(at+field, "%g is not a token count (an integer in [0, %g])", *v, float64(maxTokens))
			}
			return int(*v), nil
		}
		in, err := tokens("prompt_tokens", q.PromptTokens, true)
		if err != nil {
			return nil, err
		}
		out, err := tokens("output_tokens", q.OutputTokens, status[i] == "successful")
		if err != nil {
			return nil, err
		}
		p.InputLens, p.OutputLens = append(p.InputLens, in), append(p.OutputLens, out)
		first = math.Min(first, *q.Start)
		if q.End != nil {
			last = math.Max(last, *q.End)
		}
		if status[i] != "successful" {
			continue
		}
		if in < 1 || out < 1 {
			return nil, fail(at+"output_tokens", "%d in, %d out: a successful request has a prompt and an answer", in, out)
		}
		for _, f := range []struct {
			field string
			v     *float64
		}{{"time_to_first_token_ms", q.TTFTMs}, {"request_latency", q.Latency}} {
			if f.v == nil || !(*f.v >= 0) || *f.v > maxMeasured {
				return nil, fail(at+f.field, "missing, negative or past %g", maxMeasured)
			}
		}
		if *q.TTFTMs > *q.Latency*1e3 {
			return nil, fail(at+"time_to_first_token_ms", "%g ms exceeds request_latency %g s", *q.TTFTMs, *q.Latency)
		}
		ok++
		ttft, e2e = append(ttft, *q.TTFTMs), append(e2e, *q.Latency*1e3)
		if out >= 2 && q.ITLMs != nil {
			if !(*q.ITLMs >= 0) || *q.ITLMs > maxMeasured {
				return nil, fail(at+"inter_token_latency_ms", "%g is outside [0, %g]", *q.ITLMs, maxMeasured)
			}
			itl = append(itl, *q.ITLMs)
		}
	}
	if ok == 0 {
		return nil, fail("requests.successful", "empty: every request failed or was cut off")
	}
	if !(last > first) || last-first > 7*24*3600 {
		return nil, fail("requests", "the requests span %g s (first start to last end): want (0, a week]", last-first)
	}
	s := Stats{}
	addDist(s, "ttft_ms", sim.NewDist(ttft))
	addDist(s, "itl_ms", sim.NewDist(itl))
	addDist(s, "e2e_ms", sim.NewDist(e2e))
	s["requests_per_s"] = float64(ok) / (last - first)
	if ok < len(reqs) {
		s["completeness"] = float64(ok) / float64(len(reqs))
	}
	return keepCompared(s), nil
}

// countBefore is i's index within its status list.
func countBefore(status []string, i int) int {
	n := 0
	for _, s := range status[:i] {
		if s == status[i] {
			n++
		}
	}
	return n
}
