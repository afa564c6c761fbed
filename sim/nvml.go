package sim

import (
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/routesim/routesim/model"
)

// NVMLPeriod is the sampling period of the simulated NVML poller (the
// 100 ms of nvidia-smi loops and of the 8×A100 study's sampler).
const NVMLPeriod = 100 * Millisecond

// NVMLConfig configures the simulated GPU sampler.
type NVMLConfig struct {
	// Window is how long the sampler ran from the first arrival (0 = until
	// the run's last event); GPU statistics cover it, and a sampler that
	// ran past the run sees idle GPUs.
	Window Time
	// Series keeps every worker's per-window utilization (Result.GPU) for
	// a time-series consumer such as nvml.csv. Without it the sampler
	// keeps running sums only, and memory does not grow with simulated
	// time.
	Series bool
}

// nvml accumulates, per worker, the GPU-active time of every sampling
// window: a step's host overhead comes first and is GPU-idle, the rest of
// the step is kernel time, which is what NVML's utilization.gpu counts. A
// worker's steps come in time order, so a window is final once a later
// one is touched: each worker keeps one open window and running sums.
type nvml struct {
	tracks []gpuTrack
	limit  int      // windows in the sampler's span (0 = until the end)
	series [][]Time // [worker][window] GPU-active ns, with NVMLConfig.Series
	// flopSeries is [worker][window] FLOPs executed, kept with series for
	// workers whose power depends on them.
	flopSeries [][]float64
}

// gpuTrack is one worker's sampler: the open window and the statistics of
// the closed ones.
type gpuTrack struct {
	open     int  // index of the open window
	active   Time // its GPU-active ns
	closed   int  // windows closed within the sampler's span
	sum      float64
	min, max float64 // of closed windows' utilization
	// With a FLOP-dependent power (model.Profile.FLOPPower), the open
	// window's FLOPs and the closed windows' power.
	prof       *model.Profile
	flops      float64
	psum, pmax float64
}

func newNVML(workers []*worker, cfg NVMLConfig) nvml {
	n := nvml{tracks: make([]gpuTrack, len(workers)), limit: int((cfg.Window + NVMLPeriod - 1) / NVMLPeriod)}
	for i, w := range workers {
		if w.prof.FLOPPower() {
			n.tracks[i].prof = w.prof
		}
	}
	if cfg.Series {
		n.series = make([][]Time, len(workers))
		n.flopSeries = make([][]float64, len(workers))
	}
	return n
}

// grow adds the sampler of worker w, which joined during the run (idle
// before it joined: its windows count from the run's start).
func (n *nvml) grow(w *worker) {
	t := gpuTrack{}
	if w.prof.FLOPPower() {
		t.prof = w.prof
	}
	n.tracks = append(n.tracks, t)
	if n.series != nil {
		n.series = append(n.series, nil)
		n.flopSeries = append(n.flopSeries, nil)
	}
}

// add books a step of worker w: [start, start+dur) of which the first
// hostOverhead ns are GPU-idle; the step's flops are spread evenly over
// its kernel time.
func (n *nvml) add(w int, start, dur, hostOverhead Time, flops float64) {
	from, to := start+min(hostOverhead, dur), start+dur
	rate := 0.0
	if to > from {
		rate = flops / float64(to-from)
	}
	t := &n.tracks[w]
	for from < to {
		win := int(from / NVMLPeriod)
		end := min(to, Time(win+1)*NVMLPeriod)
		t.advance(win, n.limit)
		t.active += end - from
		if t.prof != nil {
			t.flops += rate * float64(end-from)
		}
		if n.series != nil {
			for len(n.series[w]) <= win {
				n.series[w] = append(n.series[w], 0)
			}
			n.series[w][win] += end - from
			if t.prof != nil {
				for len(n.flopSeries[w]) <= win {
					n.flopSeries[w] = append(n.flopSeries[w], 0)
				}
				n.flopSeries[w][win] += rate * float64(end-from)
			}
		}
		from = end
	}
}

// advance closes every window before to: the open one with its active
// time, the ones between idle. Only windows before limit count (0 = all).
func (t *gpuTrack) advance(to, limit int) {
	if to <= t.open {
		return
	}
	count := func(u, c float64) {
		if t.closed == 0 {
			t.min, t.max = u, u
		}
		t.sum += u
		t.min, t.max = min(t.min, u), max(t.max, u)
		if t.prof != nil {
			w := t.prof.PowerAt(u, c)
			if t.closed == 0 {
				t.pmax = w
			}
			t.psum += w
			t.pmax = max(t.pmax, w)
		}
		t.closed++
	}
	if limit == 0 || t.open < limit {
		count(float64(t.active)/float64(NVMLPeriod), t.flops/NVMLPeriod.Seconds())
	}
	idle := to - t.open - 1
	if limit > 0 {
		idle = min(to, limit) - t.open - 1
	}
	if idle > 0 {
		count(0, 0)
		t.closed += idle - 1
		if t.prof != nil {
			t.psum += float64(idle-1) * t.prof.PowerAt(0, 0)
		}
	}
	t.open, t.active, t.flops = to, 0, 0
}

// finish closes the sampler's span: windows [0, k).
func (n *nvml) finish(k int) {
	if n.limit > 0 {
		k = n.limit
	}
	for w := range n.tracks {
		n.tracks[w].advance(k, k)
	}
	n.limit = k
}

// GPUSamples is a run's simulated NVML trace: Util[w][k] is worker w's
// utilization in window k (0..1), over equal windows of NVMLPeriod from 0;
// FLOPS[w][k] the FLOP/s its GPUs executed in it (nil for a worker whose
// power depends on utilization alone).
type GPUSamples struct {
	Util  [][]float64
	FLOPS [][]float64
}

func (n *nvml) samples() GPUSamples {
	if n.series == nil {
		return GPUSamples{}
	}
	g := GPUSamples{Util: make([][]float64, len(n.series)), FLOPS: make([][]float64, len(n.series))}
	for w, a := range n.series {
		g.Util[w] = make([]float64, n.limit)
		for k := 0; k < n.limit && k < len(a); k++ {
			g.Util[w][k] = float64(a[k]) / float64(NVMLPeriod)
		}
		if n.tracks[w].prof != nil {
			g.FLOPS[w] = make([]float64, n.limit)
			for k := 0; k < n.limit && k < len(n.flopSeries[w]); k++ {
				g.FLOPS[w][k] = n.flopSeries[w][k] / NVMLPeriod.Seconds()
			}
		}
	}
	return g
}

// GPUSummary is one GPU's sampled utilization and power.
type GPUSummary struct {
	UtilMean   float64 `json:"util_mean"` // 0..1
	PowerMeanW float64 `json:"power_mean_w"`
	PowerMaxW  float64 `json:"power_max_w"`
}

// GPUStats summarises the sampler's span: per-GPU means, their spread,
// and power.
type GPUStats struct {
	GPUs       []GPUSummary `json:"gpus"`
	UtilMean   float64      `json:"util_mean"`
	UtilSkew   float64      `json:"util_skew"` // population std of per-GPU means
	PowerMeanW float64      `json:"power_mean_w"`
	PowerMaxW  float64      `json:"power_max_w"`
	WindowS    float64      `json:"window_s"`
}

// stats computes GPU statistics with power(w, util) in watts, affine in
// util (model.Profile.PowerW): the mean power is the power at the mean
// utilization, the largest at the extreme one.
func (n *nvml) stats(power func(w int, util float64) float64) GPUStats {
	st := GPUStats{WindowS: float64(n.limit) * NVMLPeriod.Seconds()}
	means := make([]float64, len(n.tracks))
	for w := range n.tracks {
		t := &n.tracks[w]
		var s GPUSummary
		switch {
		case t.closed > 0 && t.prof != nil:
			// Power is not affine in utilization: each window's counts.
			s.UtilMean = t.sum / float64(t.closed)
			s.PowerMeanW = t.psum / float64(t.closed)
			s.PowerMaxW = t.pmax
		case t.closed > 0:
			s.UtilMean = t.sum / float64(t.closed)
			s.PowerMeanW = power(w, s.UtilMean)
			s.PowerMaxW = math.Max(power(w, t.min), power(w, t.max))
		}
		means[w] = s.UtilMean
		st.GPUs = append(st.GPUs, s)
		st.PowerMeanW += s.PowerMeanW / float64(len(n.tracks))
		st.PowerMaxW = math.Max(st.PowerMaxW, s.PowerMaxW)
	}
	if len(means) > 0 {
		st.UtilMean, st.UtilSkew = stat.PopMeanStdDev(means, nil)
	}
	return st
}
