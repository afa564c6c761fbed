package sim

import (
	"math"

	"gonum.org/v1/gonum/stat"
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
}

// gpuTrack is one worker's sampler: the open window and the statistics of
// the closed ones.
type gpuTrack struct {
	open     int  // index of the open window
	active   Time // its GPU-active ns
	closed   int  // windows closed within the sampler's span
	sum      float64
	min, max float64 // of closed windows' utilization
}

func newNVML(workers int, cfg NVMLConfig) nvml {
	n := nvml{tracks: make([]gpuTrack, workers), limit: int((cfg.Window + NVMLPeriod - 1) / NVMLPeriod)}
	if cfg.Series {
		n.series = make([][]Time, workers)
	}
	return n
}

func (n *nvml) add(w int, start, dur, hostOverhead Time) {
	from, to := start+min(hostOverhead, dur), start+dur
	for from < to {
		win := int(from / NVMLPeriod)
		end := min(to, Time(win+1)*NVMLPeriod)
		t := &n.tracks[w]
		t.advance(win, n.limit)
		t.active += end - from
		if n.series != nil {
			for len(n.series[w]) <= win {
				n.series[w] = append(n.series[w], 0)
			}
			n.series[w][win] += end - from
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
	count := func(u float64) {
		if t.closed == 0 {
			t.min, t.max = u, u
		}
		t.sum += u
		t.min, t.max = math.Min(t.min, u), math.Max(t.max, u)
		t.closed++
	}
	if limit == 0 || t.open < limit {
		count(float64(t.active) / float64(NVMLPeriod))
	}
	idle := to - t.open - 1
	if limit > 0 {
		idle = min(to, limit) - t.open - 1
	}
	if idle > 0 {
		count(0)
		t.closed += idle - 1
	}
	t.open, t.active = to, 0
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
// utilization in window k (0..1), over equal windows of NVMLPeriod from 0.
type GPUSamples struct {
	Util [][]float64
}

func (n *nvml) samples() GPUSamples {
	if n.series == nil {
		return GPUSamples{}
	}
	g := GPUSamples{Util: make([][]float64, len(n.series))}
	for w, a := range n.series {
		g.Util[w] = make([]float64, n.limit)
		for k := 0; k < n.limit && k < len(a); k++ {
			g.Util[w][k] = float64(a[k]) / float64(NVMLPeriod)
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
		if t.closed > 0 {
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
