package sim

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// NVMLPeriod is the sampling period of the simulated NVML poller (the
// 100 ms of nvidia-smi loops and of the 8×A100 study's sampler).
const NVMLPeriod = 100 * Millisecond

// nvml accumulates, per worker, the GPU-active time of every sampling
// window: a step's host overhead comes first and is GPU-idle, the rest of
// the step is kernel time, which is what NVML's utilization.gpu counts.
type nvml struct {
	active [][]Time // [worker][window] GPU-active ns
}

func (n *nvml) add(w int, start, dur, hostOverhead Time) {
	from, to := start+min(hostOverhead, dur), start+dur
	for from < to {
		win := int(from / NVMLPeriod)
		end := min(to, Time(win+1)*NVMLPeriod)
		for len(n.active[w]) <= win {
			n.active[w] = append(n.active[w], 0)
		}
		n.active[w][win] += end - from
		from = end
	}
}

// GPUSamples is a run's simulated NVML trace: Util[w][k] is worker w's
// utilization in window k (0..1), over equal windows of NVMLPeriod from 0.
type GPUSamples struct {
	Util [][]float64
}

func (n *nvml) samples(windows int) GPUSamples {
	g := GPUSamples{Util: make([][]float64, len(n.active))}
	for w, a := range n.active {
		g.Util[w] = make([]float64, windows)
		for k := 0; k < windows && k < len(a); k++ {
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

// GPUStats summarises samples over the first `windows` windows (a sampler
// that ran that long): per-GPU means, their spread, and power from power.
type GPUStats struct {
	GPUs       []GPUSummary `json:"gpus"`
	UtilMean   float64      `json:"util_mean"`
	UtilSkew   float64      `json:"util_skew"` // population std of per-GPU means
	PowerMeanW float64      `json:"power_mean_w"`
	PowerMaxW  float64      `json:"power_max_w"`
	WindowS    float64      `json:"window_s"`
}

// Summarize computes GPU statistics with power(util) in watts.
func (g GPUSamples) Summarize(power func(w int, util float64) float64) GPUStats {
	st := GPUStats{}
	means := make([]float64, len(g.Util))
	for w, us := range g.Util {
		var s GPUSummary
		for _, u := range us {
			p := power(w, u)
			s.UtilMean += u / float64(len(us))
			s.PowerMeanW += p / float64(len(us))
			s.PowerMaxW = math.Max(s.PowerMaxW, p)
		}
		means[w] = s.UtilMean
		st.GPUs = append(st.GPUs, s)
		st.PowerMeanW += s.PowerMeanW / float64(len(g.Util))
		st.PowerMaxW = math.Max(st.PowerMaxW, s.PowerMaxW)
		st.WindowS = float64(len(us)) * NVMLPeriod.Seconds()
	}
	if len(means) > 0 {
		st.UtilMean, st.UtilSkew = stat.PopMeanStdDev(means, nil)
	}
	return st
}
