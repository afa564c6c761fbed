package calib

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// BenchPoint is one load point of a serving-benchmark client (vLLM's
// `vllm bench serve`, LMCache's LMBench, a GuideLLM benchmark): what it
// measured, and how to
// re-simulate it as the client ran it. A reader fills it from one file.
type BenchPoint struct {
	File   string // the file it was read from, for messages
	Format string // "vllm-bench", "lmbench" or "guidellm"
	// Requests is the number of prompts the client sent.
	Requests int
	// RatePerS is the request rate; +Inf sends every request at t = 0.
	RatePerS float64
	// Burstiness is the shape of vLLM's gamma inter-arrival times (1 =
	// Poisson; +Inf = evenly spaced).
	Burstiness float64
	// NoRescale keeps drawn send times as drawn; vLLM scales them so the
	// last request is sent at requests/rate.
	NoRescale bool
	// MaxConcurrency bounds the requests in flight (0 = no bound): a
	// request due while the bound is reached waits, FIFO, for a slot.
	MaxConcurrency int
	// InputLens and OutputLens are each request's lengths in send order,
	// when the file saves them; otherwise Dataset draws them.
	InputLens, OutputLens []int
	Dataset               *RandomDataset
	// SendS are the send times (seconds from the benchmark's start), when
	// the file records them; nil = drawn from the rate.
	SendS []float64
	// Users, when set, is each request's user in a multi-round client
	// (LMBench): a user's question extends its previous prompt (the prompt
	// blocks are shared) and is sent UserGapS after the previous one was
	// sent, or when it ended if that is later.
	Users    []int
	UserGapS float64
	// Stats are the measured statistics the fit compares; Records the
	// per-request measurements, in send order, when the file saves them.
	Stats   Stats
	Records []Record
}

// RandomDataset is vLLM's random dataset: lengths drawn uniformly from
// [⌊L·(1−r)⌋, ⌈L·(1+r)⌉] for the input and output lengths L and range
// ratio r (vllm/benchmarks/datasets.py, RandomDataset.get_sampling_params,
// vllm-project/vllm@009e6d4a).
type RandomDataset struct {
	InputLen, OutputLen int
	RangeRatio          float64
}

// benchTraceBlock is the trace block size (hash ids cover 512 tokens).
const benchTraceBlock = 512

// Trace is the point's requests as the client sent them: lengths from the
// file (or drawn from its dataset with rng), send times recorded or drawn
// as vLLM draws them (get_request in vllm/benchmarks/serve.py,
// vllm-project/vllm@009e6d4a: gamma gaps of shape burstiness and scale
// 1/(rate·burstiness), summed from the first request on, then scaled so
// the last request is sent at requests/rate; an infinite rate sends all
// at t = 0). Prompts share nothing (random tokens).
func (p *BenchPoint) Trace(rng *rand.Rand) *workload.Trace {
	n := p.Requests
	at := p.sendTimes(rng)
	isl, osl := p.InputLens, p.OutputLens
	if isl == nil {
		d := p.Dataset
		isl, osl = make([]int, n), make([]int, n)
		lo, hi := int(math.Floor(float64(d.InputLen)*(1-d.RangeRatio))), int(math.Ceil(float64(d.InputLen)*(1+d.RangeRatio)))
		for i := range isl {
			isl[i] = max(lo+rng.IntN(hi-lo+1), 1)
		}
		lo, hi = int(math.Floor(float64(d.OutputLen)*(1-d.RangeRatio))), int(math.Ceil(float64(d.OutputLen)*(1+d.RangeRatio)))
		lo, hi = max(lo, 1), max(hi, 1)
		for i := range osl {
			osl[i] = lo + rng.IntN(hi-lo+1)
		}
	}
	// A failed request's output length is not saved (vLLM writes 0): it
	// is sent asking for the completed requests' mean.
	fill, sum, k := 1, 0, 0
	for _, o := range osl {
		if o > 0 {
			sum, k = sum+o, k+1
		}
	}
	if k > 0 {
		fill = max(1, int(math.Round(float64(sum)/float64(k))))
	}
	t := &workload.Trace{Name: fmt.Sprintf("%s %s", p.Format, p.File)}
	next := int64(1)
	type conv struct {
		ids    []int64
		prompt int
	}
	convs := map[int]conv{}
	for i := 0; i < n; i++ {
		r := workload.Request{Line: i + 1, ArrivalNs: int64(math.Round(at[i] * 1e9)), InputTokens: max(isl[i], 1), OutputTokens: osl[i]}
		if r.OutputTokens < 1 {
			r.OutputTokens = fill
		}
		if p.Users != nil {
			// The user's earlier prompt is this one's prefix: its whole
			// blocks are shared.
			c := convs[p.Users[i]]
			r.HashIDs = append(r.HashIDs, c.ids[:min(c.prompt, r.InputTokens)/benchTraceBlock]...)
		}
		for len(r.HashIDs) < (r.InputTokens+benchTraceBlock-1)/benchTraceBlock {
			r.HashIDs = append(r.HashIDs, next)
			next++
		}
		if p.Users != nil {
			convs[p.Users[i]] = conv{ids: r.HashIDs, prompt: r.InputTokens}
		}
		t.Requests = append(t.Requests, r)
	}
	return t
}

// promptVolume bounds the point's prompt tokens in all (the longest a
// dataset can draw, for each request).
func (p *BenchPoint) promptVolume() float64 {
	if p.InputLens != nil {
		v := 0.0
		for _, n := range p.InputLens {
			v += float64(n)
		}
		return v
	}
	return float64(p.Requests) * math.Ceil(float64(p.Dataset.InputLen)*(1+p.Dataset.RangeRatio))
}

// sendTimes are the requests' send times in seconds (non-decreasing).
func (p *BenchPoint) sendTimes(rng *rand.Rand) []float64 {
	n := p.Requests
	at := make([]float64, n)
	switch {
	case p.SendS != nil:
		copy(at, p.SendS)
	case math.IsInf(p.RatePerS, 1):
	case math.IsInf(p.Burstiness, 1):
		for i := range at {
			at[i] = float64(i+1) / p.RatePerS
		}
	default:
		g := distuv.Gamma{Alpha: p.Burstiness, Beta: p.RatePerS * p.Burstiness, Src: rng}
		sum := 0.0
		for i := range at {
			sum += g.Rand()
			at[i] = sum
		}
		if sum > 0 && !p.NoRescale {
			f := float64(n) / p.RatePerS / sum
			for i := range at {
				at[i] *= f
			}
		}
	}
	for i := 1; i < n; i++ {
		at[i] = math.Max(at[i], at[i-1]) // rounding never reorders
	}
	return at
}

// clientLimit is a client's bound on requests in flight (vLLM's
// --max-concurrency: an asyncio.Semaphore around each request, which
// starts its clock once it holds a slot): the first limit requests are
// sent when due, and each request that ends hands its slot to the next
// one in send order, sent when due or at once if overdue.
type clientLimit struct {
	pending []sim.Job
	next    int
}

// newClientLimit splits wl into the requests sent unhindered and the
// ones that wait for a slot.
func newClientLimit(wl *sim.Workload, limit int) (*clientLimit, *sim.Workload) {
	if limit <= 0 || limit >= len(wl.Jobs) {
		return nil, wl
	}
	open := *wl
	open.Jobs = wl.Jobs[:limit:limit]
	return &clientLimit{pending: wl.Jobs[limit:]}, &open
}

// Ended implements sim.FollowUp: a slot is free.
func (c *clientLimit) Ended(_ *sim.Job, _ sim.Status, at sim.Time) *sim.Job {
	if c.next >= len(c.pending) {
		return nil
	}
	j := c.pending[c.next]
	c.next++
	j.Arrival = max(j.Arrival, at)
	return &j
}

// benchStats are a simulated vllm bench serve point's statistics, with
// throughput as that client computes it: completed requests over the time
// from the benchmark's start (t = 0) to the last request's end.
func benchStats(res *sim.Result) Stats {
	s := simulatedStats(res)
	var last sim.Time
	done := 0
	for i := range res.Records {
		r := &res.Records[i]
		last = max(last, r.End)
		if r.Status == sim.StatusOK {
			done++
		}
	}
	if last > 0 {
		s["requests_per_s"] = float64(done) / (float64(last) / 1e9)
	}
	return s
}

// benchPlaceholder is the workload a bench point's setup is built with
// before the point's own requests replace it (one request: building it
// costs nothing).
var benchPlaceholder = workload.Synthetic{Requests: 1, RatePerS: 1}

// benchWorkload replaces the arm's workload with the point's requests,
// drawn once from the setup's seed (stream "bench"), so every candidate
// of a fit replays the same requests.
func (a *arm) benchWorkload(p *BenchPoint) error {
	if a.spec.WarmupS > 0 {
		return inputerr.Wrap("warmup_s", fmt.Errorf("%g: a load point is measured whole (its client's warm-up requests are not in the file); set 0", a.spec.WarmupS))
	}
	tr := p.Trace(sim.Stream(a.spec.Seed, "bench"))
	wl, err := workload.Prepare(tr, a.built.Config.Front().Worker.BlockSize)
	if err != nil {
		return fmt.Errorf("%s: %w", p.File, err)
	}
	a.built.Work, a.bench = wl, p
	return nil
}

// benchFile is the run's benchmark-client file, if any.
func (r *Run) benchFile() string { return r.VLLMBench + r.LMBench + r.GuideLLM }

// BenchFile is one load point's file and its format, named by the spec
// field that would hold it ("vllm_bench", "lmbench").
type BenchFile struct {
	Field, Path string
}

// BenchSpec is a calibration of benchmark-client load points: one run
// per file, named by the file's base name without its extension, each
// re-simulated on setup (the deployment and engine the server ran); base
// is the profile to start from ("" = the deployment's default). Paths are
// as given (relative to the working directory).
func BenchSpec(files []BenchFile, setup scenario.Spec, base string) (*Spec, error) {
	s := &Spec{Name: "load points", Base: base, dir: ".", file: "(command line)"}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))
		r := Run{Name: name, Arm: name, Setup: setup}
		switch f.Field {
		case "vllm_bench":
			r.VLLMBench = f.Path
		case "lmbench":
			r.LMBench = f.Path
		case "guidellm":
			// One run per benchmark of the report: name-INDEX-STRATEGY.
			points, err := readGuideLLMFile(f.Path)
			if err != nil {
				return nil, err
			}
			for i, gp := range points {
				n := fmt.Sprintf("%s-%d-%s", name, i, gp.Label)
				s.Runs = append(s.Runs, Run{Name: n, Arm: n, Setup: setup, GuideLLM: f.Path, GuideLLMBenchmark: i})
			}
			continue
		default:
			return nil, fmt.Errorf("calib: unknown load-point format %q", f.Field)
		}
		s.Runs = append(s.Runs, r)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// readGuideLLMFile reads a GuideLLM report from path.
func readGuideLLMFile(path string) ([]GuideLLMPoint, error) {
	var out []GuideLLMPoint
	err := readFile(path, func(f *os.File, name string) (err error) {
		out, err = ReadGuideLLM(f, name)
		return err
	})
	return out, err
}
