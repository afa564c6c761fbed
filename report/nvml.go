package report

import (
	"fmt"
	"io"
	"time"

	"github.com/routesim/routesim/sim"
)

// NvidiaSmiHeader is the header nvidia-smi prints for
// --query-gpu=timestamp,index,utilization.gpu,power.draw,memory.used --format=csv.
const NvidiaSmiHeader = "timestamp, index, utilization.gpu [%], power.draw [W], memory.used [MiB]"

// WriteNvidiaSmiCSV writes the simulated NVML trace as nvidia-smi's CSV:
// one row per sample and GPU, timestamps counted from the Unix epoch (the
// run starts at 1970/01/01 00:00:00.000). Each worker is tp GPUs with the
// same readings.
func WriteNvidiaSmiCSV(w io.Writer, g sim.GPUSamples, tp int, power func(float64) float64, memUsedBytes int64) error {
	if _, err := fmt.Fprintln(w, NvidiaSmiHeader); err != nil {
		return err
	}
	if len(g.Util) == 0 {
		return nil
	}
	mib := memUsedBytes >> 20
	for k := range g.Util[0] {
		ts := time.Unix(0, int64(time.Duration(k+1)*time.Duration(sim.NVMLPeriod))).UTC().Format("2006/01/02 15:04:05.000")
		for wk, us := range g.Util {
			u := us[k]
			for r := 0; r < tp; r++ {
				if _, err := fmt.Fprintf(w, "%s, %d, %d %%, %.2f W, %d MiB\n", ts, wk*tp+r, int(u*100+0.5), power(u), mib); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
