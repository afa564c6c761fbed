package calib

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// MLEnergyBench re-simulates ML.ENERGY rows as the benchmark ran them:
// one vLLM server (a TP group) at the row's --max-num-seqs, every request
// sent at t = 0, output lengths drawn from the task's distribution, and
// the figures taken over the benchmark's steady-state window.
type MLEnergyBench struct {
	Deploy model.Deployment
	// Engine is the server's configuration; MaxNumSeqs is each row's.
	Engine sim.EngineFlags
	// OSL is the output-length distribution's shape; each row's draws are
	// scaled to its avg_output_len and capped at MaxOutput.
	OSL       *OSLHistogram
	MaxOutput int
	// ISLMean and ISLCV describe the prompt lengths (lognormal): the
	// benchmark publishes none, so the fit treats the mean as a nuisance
	// parameter unless ISLKnown says ISLMean was given.
	ISLMean, ISLCV float64
	ISLKnown       bool
	// Seed draws the workload (the same prompts for every candidate).
	Seed uint64
}

// SteadyState is what the benchmark reports for one row, simulated.
type SteadyState struct {
	MedianITLMs float64 `json:"median_itl_ms"`
	P90ITLMs    float64 `json:"p90_itl_ms"`
	TokensPerS  float64 `json:"output_tokens_per_s"`
	AvgBatch    float64 `json:"avg_batch"`
	PowerW      float64 `json:"power_w"` // per GPU
	// Util and FLOPS are the window's mean kernel-busy share and FLOP/s
	// per GPU (what the power line is fitted on).
	Util    float64 `json:"util"`
	FLOPS   float64 `json:"flops_per_s"`
	WindowS float64 `json:"window_s"`
	// bins are the window's NVML samples (utilisation, FLOP/s, weight).
	bins []powerBin
}

type powerBin struct{ util, flops, weight float64 }

// powerWith is the window's mean power under p's power line.
func (s *SteadyState) powerWith(p *model.Profile) float64 {
	w := 0.0
	for _, b := range s.bins {
		w += p.PowerAt(b.util, b.flops) * b.weight
	}
	return w
}

// benchSteps keeps every step of a run (the benchmark's figures come from
// them).
type benchSteps struct {
	start, dur    []sim.Time
	decode, seqs  []int32
	flops, active []float64 // FLOPs and kernel ns of the step
	prof          *model.Profile
}

// Step records one step (sim.StepObserver).
func (l *benchSteps) Step(_ int, start, dur sim.Time, b model.Batch, seqs, _ int) {
	p := l.prof
	l.start = append(l.start, start)
	l.dur = append(l.dur, dur)
	l.decode = append(l.decode, int32(b.DecodeSeqs))
	l.seqs = append(l.seqs, int32(seqs))
	l.flops = append(l.flops, p.StepFLOPs(b))
	l.active = append(l.active, math.Max(0, float64(dur)-p.HostOverheadNs))
}

// workload draws the run's requests: n prompts at t = 0.
func (b *MLEnergyBench) workload(row MLEnergyRow, blockSize, maxModelLen int) (*sim.Workload, error) {
	rng := sim.Stream(b.Seed, "mlenergy-workload")
	n := row.requests()
	cum := make([]float64, len(b.OSL.Counts))
	total := 0.0
	for i, c := range b.OSL.Counts {
		total += c
		cum[i] = total
	}
	scale := row.AvgOutput / b.OSL.Mean()
	cv := b.ISLCV
	sd := math.Sqrt(math.Log1p(cv * cv))
	tr := &workload.Trace{Name: fmt.Sprintf("mlenergy(%s, max_num_seqs %d)", row.ModelID, row.MaxNumSeqs)}
	next := int64(1)
	for i := 0; i < n; i++ {
		// The same uniforms for every candidate: lengths move smoothly
		// with the ISL mean.
		z, u, v := rng.NormFloat64(), rng.Float64(), rng.Float64()
		bin := sort.SearchFloat64s(cum, u*total)
		bin = min(bin, len(cum)-1)
		lo, hi := b.OSL.Bins[bin], b.OSL.Bins[bin+1]
		out := int(math.Round((lo + v*(hi-lo)) * scale))
		out = max(1, min(out, b.MaxOutput))
		in := int(math.Round(b.ISLMean * math.Exp(sd*z-sd*sd/2)))
		in = max(1, min(in, maxModelLen-out))
		ids := make([]int64, (in+workload.MooncakeBlockTokens-1)/workload.MooncakeBlockTokens)
		for k := range ids {
			ids[k] = next
			next++
		}
		tr.Requests = append(tr.Requests, workload.Request{Line: i + 1, InputTokens: in, OutputTokens: out, HashIDs: ids})
	}
	return workload.Prepare(tr, blockSize)
}

// Simulate runs row with profile p and measures it as the benchmark does.
func (b *MLEnergyBench) Simulate(row MLEnergyRow, p *model.Profile) (SteadyState, error) {
	eng := b.Engine
	eng.MaxNumSeqs = row.MaxNumSeqs
	wc, err := sim.ResolveWorker(b.Deploy, eng)
	if err != nil {
		return SteadyState{}, err
	}
	wl, err := b.workload(row, wc.BlockSize, wc.MaxModelLen)
	if err != nil {
		return SteadyState{}, err
	}
	log := &benchSteps{prof: p}
	built, err := scenario.Replay(1, wc, p, wl, "round-robin")
	if err != nil {
		return SteadyState{}, err
	}
	run := built.Run(b.Seed)
	run.Config.Observer = log
	res, _, err := run.Exec()
	if err != nil {
		return SteadyState{}, err
	}
	return steadyState(res, log, row.MaxNumSeqs, p)
}

// steadyState measures a run over ML.ENERGY's window: it opens when
// max_num_seqs requests have their first token and closes when all but
// max_num_seqs+1 have finished (mlenergy/benchmark/llm/benchmark.py; the
// whole run where that window would be empty). The ITL median is over
// every streamed token of the run, as published.
func steadyState(res *sim.Result, l *benchSteps, mns int, p *model.Profile) (SteadyState, error) {
	var first, end []sim.Time
	for _, r := range res.Records {
		if r.Status != sim.StatusOK {
			return SteadyState{}, fmt.Errorf("request %d ended %v (%s): the benchmark's runs completed every request", r.ID, r.Status, r.Reason)
		}
		first = append(first, r.FirstToken)
		end = append(end, r.End)
	}
	slices.Sort(first)
	slices.Sort(end)
	n := len(res.Records)
	open, shut := first[0], end[n-1]
	if k := n - mns - 1; mns <= n && k >= 1 && end[k-1] > first[mns-1] {
		open, shut = first[mns-1], end[k-1]
	}
	var st SteadyState
	span := float64(shut - open)
	st.WindowS = span / 1e9
	// Tokens: every decode token of a step ending in the window, and the
	// first tokens that landed in it.
	tokens := 0.0
	for _, t := range first {
		if t > open && t <= shut {
			tokens++
		}
	}
	// Per-window power as NVML would sample it (model.Profile.PowerAt).
	bins := max(1, int(math.Ceil(span/float64(sim.NVMLPeriod))))
	active, flops := make([]float64, bins), make([]float64, bins)
	batchArea := 0.0
	type gap struct{ ns, w float64 }
	var gaps []gap
	for i := range l.start {
		s, d := l.start[i], l.dur[i]
		if l.decode[i] > 0 {
			gaps = append(gaps, gap{float64(d), float64(l.decode[i])})
		}
		e := s + d
		if e > open && e <= shut {
			tokens += float64(l.decode[i])
		}
		lo, hi := max(s, open), min(e, shut)
		if hi <= lo {
			continue
		}
		batchArea += float64(l.seqs[i]) * float64(hi-lo)
		// Spread the step's kernel time and FLOPs evenly over it, then
		// book them by sampling window.
		fa, ff := l.active[i]/float64(d), l.flops[i]/float64(d)
		for from := lo; from < hi; {
			k := int((from - open) / sim.NVMLPeriod)
			to := min(hi, open+sim.Time(k+1)*sim.NVMLPeriod)
			if k < bins {
				active[k] += fa * float64(to-from)
				flops[k] += ff * float64(to-from)
			}
			from = to
		}
	}
	if span <= 0 || len(gaps) == 0 {
		return st, fmt.Errorf("no steady state: the run has no decode steps in its window")
	}
	st.TokensPerS = tokens / st.WindowS
	st.AvgBatch = batchArea / span
	for k := 0; k < bins; k++ {
		w := float64(sim.NVMLPeriod)
		if k == bins-1 {
			w = span - float64(bins-1)*float64(sim.NVMLPeriod)
		}
		u, f := math.Min(1, active[k]/w), flops[k]/(w/1e9)
		st.bins = append(st.bins, powerBin{u, f, w / span})
		st.Util += u * w / span
		st.FLOPS += f * w / span
	}
	st.PowerW = st.powerWith(p)
	// The token-weighted median of the decode steps' durations: every
	// sequence in a decode step waited one step for its token.
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].ns < gaps[j].ns })
	total := 0.0
	for _, g := range gaps {
		total += g.w
	}
	acc := 0.0
	for _, g := range gaps {
		acc += g.w
		if acc >= total/2 && st.MedianITLMs == 0 {
			st.MedianITLMs = g.ns / 1e6
		}
		if acc >= 0.9*total {
			st.P90ITLMs = g.ns / 1e6
			break
		}
	}
	return st, nil
}
