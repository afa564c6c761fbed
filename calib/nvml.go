package calib

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DeviceStats summarises one GPU's samples.
type DeviceStats struct {
	Index      int     `json:"index"`
	Samples    int     `json:"samples"`
	UtilMean   float64 `json:"util_mean"` // 0..1
	PowerMeanW float64 `json:"power_mean_w"`
	PowerMaxW  float64 `json:"power_max_w"`
}

// GPUObservation is what a run's NVML sampler saw: per-device statistics
// over a sampling window.
type GPUObservation struct {
	Devices []DeviceStats `json:"devices"`
	WindowS float64       `json:"window_s"`
}

// UtilMean is the mean utilization over devices (0..1).
func (g *GPUObservation) UtilMean() float64 {
	s := 0.0
	for _, d := range g.Devices {
		s += d.UtilMean / float64(len(g.Devices))
	}
	return s
}

var smiColumns = []string{"timestamp", "index", "utilization.gpu", "power.draw", "memory.used"}

// ReadNvidiaSmiCSV parses nvidia-smi --query-gpu=timestamp,index,
// utilization.gpu,power.draw,memory.used --format=csv[,nounits] output
// (columns in any order, units optional) into per-device statistics.
func ReadNvidiaSmiCSV(r io.Reader, name string) (*GPUObservation, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, errf(name, 1, "", "no header: %v", err)
	}
	col := map[string]int{}
	for i, h := range header {
		key := strings.TrimSpace(h)
		if j := strings.Index(key, " ["); j >= 0 {
			key = key[:j]
		}
		col[key] = i
	}
	for _, c := range smiColumns {
		if _, ok := col[c]; !ok {
			return nil, errf(name, 1, c, "column missing (want %s)", strings.Join(smiColumns, ", "))
		}
	}
	type acc struct {
		n               int
		util, pow, pmax float64
	}
	devs := map[int]*acc{}
	var first, last time.Time
	line := 1
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line++
		if err != nil {
			return nil, errf(name, line, "", "%v", err)
		}
		if len(rec) != len(header) {
			return nil, errf(name, line, "", "%d fields, header has %d", len(rec), len(header))
		}
		num := func(c, unit string) (float64, error) {
			s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rec[col[c]]), unit))
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return 0, errf(name, line, c, "%q is not a valid reading", rec[col[c]])
			}
			return v, nil
		}
		ts, err := time.Parse("2006/01/02 15:04:05.000", strings.TrimSpace(rec[col["timestamp"]]))
		if err != nil {
			return nil, errf(name, line, "timestamp", "%q: want YYYY/MM/DD HH:MM:SS.mmm", rec[col["timestamp"]])
		}
		if first.IsZero() || ts.Before(first) {
			first = ts
		}
		if ts.After(last) {
			last = ts
		}
		idx, err := num("index", "")
		if err != nil || idx != math.Trunc(idx) {
			return nil, errf(name, line, "index", "%q is not a GPU index", rec[col["index"]])
		}
		util, err := num("utilization.gpu", "%")
		if err != nil {
			return nil, err
		}
		if util > 100 {
			return nil, errf(name, line, "utilization.gpu", "%g %% is over 100", util)
		}
		pow, err := num("power.draw", "W")
		if err != nil {
			return nil, err
		}
		if _, err := num("memory.used", "MiB"); err != nil {
			return nil, err
		}
		a := devs[int(idx)]
		if a == nil {
			a = &acc{}
			devs[int(idx)] = a
		}
		a.n++
		a.util += util / 100
		a.pow += pow
		a.pmax = math.Max(a.pmax, pow)
	}
	if len(devs) == 0 {
		return nil, errf(name, 0, "", "no samples")
	}
	obs := &GPUObservation{}
	for i, a := range devs {
		obs.Devices = append(obs.Devices, DeviceStats{Index: i, Samples: a.n, UtilMean: a.util / float64(a.n), PowerMeanW: a.pow / float64(a.n), PowerMaxW: a.pmax})
	}
	sort.Slice(obs.Devices, func(i, j int) bool { return obs.Devices[i].Index < obs.Devices[j].Index })
	period := 0.0
	if n := obs.Devices[0].Samples; n > 1 {
		period = last.Sub(first).Seconds() / float64(n-1)
	}
	obs.WindowS = last.Sub(first).Seconds() + period
	return obs, nil
}

// ReadInferscope parses an inferscope --sample-only --gpu --json summary:
// gpu.per_device[] with utilization_mean_percent and power_{mean,max}_milliwatts;
// the window is duration_secs.
func ReadInferscope(r io.Reader, name string) (*GPUObservation, error) {
	var doc struct {
		Duration *float64 `json:"duration_secs"`
		GPU      *struct {
			PerDevice []struct {
				Index     *int     `json:"device_index"`
				Samples   int      `json:"sample_count"`
				UtilMean  *float64 `json:"utilization_mean_percent"`
				PowerMean *float64 `json:"power_mean_milliwatts"`
				PowerMax  *float64 `json:"power_max_milliwatts"`
			} `json:"per_device"`
		} `json:"gpu"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, errf(name, 0, "", "malformed JSON: %v", err)
	}
	if doc.Duration == nil || *doc.Duration <= 0 {
		return nil, errf(name, 0, "duration_secs", "missing or not positive")
	}
	if doc.GPU == nil || len(doc.GPU.PerDevice) == 0 {
		return nil, errf(name, 0, "gpu.per_device", "missing or empty (sampled without --gpu?)")
	}
	obs := &GPUObservation{WindowS: *doc.Duration}
	for i, d := range doc.GPU.PerDevice {
		field := "gpu.per_device[" + strconv.Itoa(i) + "]"
		if d.Index == nil || d.UtilMean == nil || d.PowerMean == nil || d.PowerMax == nil {
			return nil, errf(name, 0, field, "needs device_index, utilization_mean_percent, power_mean_milliwatts, power_max_milliwatts")
		}
		if *d.UtilMean < 0 || *d.UtilMean > 100 || *d.PowerMean < 0 || *d.PowerMax < *d.PowerMean {
			return nil, errf(name, 0, field, "implausible readings (util %g %%, power mean %g mW, max %g mW)", *d.UtilMean, *d.PowerMean, *d.PowerMax)
		}
		obs.Devices = append(obs.Devices, DeviceStats{Index: *d.Index, Samples: d.Samples, UtilMean: *d.UtilMean / 100,
			PowerMeanW: *d.PowerMean / 1000, PowerMaxW: *d.PowerMax / 1000})
	}
	return obs, nil
}
