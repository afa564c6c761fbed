package report

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/routesim/routesim/sim"
)

// NvidiaSmiHeader is the header nvidia-smi prints for
// --query-gpu=timestamp,index,utilization.gpu,power.draw,memory.used --format=csv.
const NvidiaSmiHeader = "timestamp, index, utilization.gpu [%], power.draw [W], memory.used [MiB]"

// NVML is a run's simulated GPU trace with what turns it into readings:
// each worker is TP GPUs with the same utilization, drawing
// PowerW(util, FLOP/s) watts (model.Profile.PowerAt) and holding
// MemUsedBytes of device memory.
type NVML struct {
	Samples      sim.GPUSamples
	TP           int
	GPUName      string
	PowerW       func(util, flopsPerS float64) float64
	MemUsedBytes int64
}

// power is worker wk's draw in window k.
func (n *NVML) power(wk, k int) float64 {
	f := 0.0
	if wk < len(n.Samples.FLOPS) && n.Samples.FLOPS[wk] != nil {
		f = n.Samples.FLOPS[wk][k]
	}
	return n.PowerW(n.Samples.Util[wk][k], f)
}

// WriteNvidiaSmiCSV writes the simulated NVML trace as nvidia-smi's CSV:
// one row per sample and GPU, stamped on the wall clock from start (the
// instant of simulated time 0), each sample at the end of its window.
func WriteNvidiaSmiCSV(w io.Writer, n NVML, start time.Time) error {
	buf := append(make([]byte, 0, 1<<15), NvidiaSmiHeader+"\n"...)
	g := n.Samples
	if len(g.Util) == 0 {
		_, err := w.Write(buf)
		return err
	}
	mib := n.MemUsedBytes >> 20
	var ts []byte
	for k := range g.Util[0] {
		ts = start.Add(time.Duration(k+1)*time.Duration(sim.NVMLPeriod)).UTC().AppendFormat(ts[:0], "2006/01/02 15:04:05.000")
		for wk, us := range g.Util {
			u, p := us[k], n.power(wk, k)
			for r := 0; r < n.TP; r++ {
				// "%s, %d, %d %%, %.2f W, %d MiB\n", without fmt's
				// per-call cost: a day's trace at N = 16 is 14M rows.
				buf = append(append(buf, ts...), ", "...)
				buf = strconv.AppendInt(buf, int64(wk*n.TP+r), 10)
				buf = append(buf, ", "...)
				buf = strconv.AppendInt(buf, int64(int(u*100+0.5)), 10)
				buf = append(buf, " %, "...)
				buf = strconv.AppendFloat(buf, p, 'f', 2, 64)
				buf = append(buf, " W, "...)
				buf = strconv.AppendInt(buf, mib, 10)
				buf = append(buf, " MiB\n"...)
			}
			if len(buf) > 1<<15-256 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// aiperfTelemetry renders the trace as AIPerf's telemetry_data: one DCGM
// endpoint per worker (a host with TP GPUs), and per GPU the statistics
// of its samples for power (W), cumulative energy (MJ), utilization (%)
// and memory used (GB).
func (n *NVML) aiperfTelemetry(start time.Time) string {
	windows := 0
	if len(n.Samples.Util) > 0 {
		windows = len(n.Samples.Util[0])
	}
	var endpoints object
	var urls []byte
	for wk, us := range n.Samples.Util {
		power, energy, util, mem := make([]float64, len(us)), make([]float64, len(us)), make([]float64, len(us)), make([]float64, len(us))
		joules := 0.0
		for k, u := range us {
			power[k] = n.power(wk, k)
			joules += power[k] * sim.NVMLPeriod.Seconds()
			energy[k] = joules / 1e6
			util[k] = 100 * u
			mem[k] = float64(n.MemUsedBytes) / 1e9
		}
		// The worker's TP GPUs read the same: one set of statistics.
		var metrics object
		metrics.dist("gpu_power_usage", "W", power)
		metrics.dist("energy_consumption", "MJ", energy)
		metrics.dist("gpu_utilization", "%", util)
		metrics.dist("gpu_memory_used", "GB", mem)
		host := "worker-" + strconv.Itoa(wk)
		var gpus object
		for r := 0; r < n.TP; r++ {
			idx := wk*n.TP + r
			var gpu object
			gpu.raw("gpu_index", strconv.Itoa(r))
			gpu.raw("gpu_name", strconv.Quote(n.GPUName))
			gpu.raw("gpu_uuid", strconv.Quote(fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", idx)))
			gpu.raw("hostname", strconv.Quote(host))
			gpu.raw("metrics", string(metrics.bytes()))
			gpus.raw("gpu_"+strconv.Itoa(r), string(gpu.bytes()))
		}
		var ep object
		ep.raw("gpus", string(gpus.bytes()))
		endpoints.raw(host+":9401", string(ep.bytes()))
		if len(urls) > 0 {
			urls = append(urls, ',')
		}
		urls = strconv.AppendQuote(urls, "http://"+host+":9401/metrics")
	}
	var summary object
	summary.raw("endpoints_configured", "["+string(urls)+"]")
	summary.raw("endpoints_successful", "["+string(urls)+"]")
	summary.raw("start_time", strconv.Quote(start.UTC().Format(AIPerfTimeLayout)))
	summary.raw("end_time", strconv.Quote(start.Add(time.Duration(windows)*time.Duration(sim.NVMLPeriod)).UTC().Format(AIPerfTimeLayout)))
	var o object
	o.raw("summary", string(summary.bytes()))
	o.raw("endpoints", string(endpoints.bytes()))
	return string(o.bytes())
}
