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

	"github.com/routesim/routesim/internal/inputerr"
)

// DeviceStats summarises one GPU's samples.
type DeviceStats struct {
	Index      int     `json:"index"`
	Samples    int     `json:"samples"`
	UtilMean   float64 `json:"util_mean"` // 0..1
	PowerMeanW float64 `json:"power_mean_w"`
	PowerMaxW  float64 `json:"power_max_w"`
	// at is where the file gives the device's index, for errors.
	at position
}

// GPUObservation is what a run's NVML sampler saw: per-device statistics
// over a sampling window.
type GPUObservation struct {
	Devices []DeviceStats `json:"devices"`
	WindowS float64       `json:"window_s"`
	// file is the file the samples come from; first and last are its
	// first and last samples' wall-clock times (read as UTC), when the
	// format gives them.
	file        string
	first, last stamp
}

// position is a line and field of an input file.
type position struct {
	line  int
	field string
}

// stamp is a sample's time and where the file gives it.
type stamp struct {
	t    time.Time
	text string
	line int
}

// Bounds on NVML readings: a GPU index past maxGPUIndex is corrupt, and a
// sampling window longer than a week (the longest simulated run a
// scenario allows) is not one benchmark run.
const (
	maxGPUIndex = 1 << 16
	maxWindowS  = 7 * 24 * 3600
)

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
// (columns in any order, units optional; at most inputerr.MaxDataFile
// bytes) into per-device statistics. Samples must be in time order and
// span at most a week.
func ReadNvidiaSmiCSV(r io.Reader, name string) (*GPUObservation, error) {
	cr := csv.NewReader(inputerr.Reader(r, name, inputerr.MaxDataFile))
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			return nil, ie
		}
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
		line            int
	}
	devs := map[int]*acc{}
	var first, last stamp
	line := 1
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line++
		if err != nil {
			var ie *inputerr.Error
			if errors.As(err, &ie) {
				return nil, ie
			}
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
		text := strings.TrimSpace(rec[col["timestamp"]])
		ts, err := time.Parse(smiTimeLayout, text)
		if err != nil {
			return nil, errf(name, line, "timestamp", "%q: want YYYY/MM/DD HH:MM:SS.mmm", rec[col["timestamp"]])
		}
		now := stamp{t: ts, text: text, line: line}
		if first.t.IsZero() {
			first = now
		} else if ts.Before(last.t) {
			return nil, errf(name, line, "timestamp", "%s is before the previous sample's %s (line %d): samples out of time order (two logs joined?)", text, last.text, last.line)
		} else if d := ts.Sub(first.t).Seconds(); d > maxWindowS {
			return nil, errf(name, line, "timestamp", "%s is %.3g days after the first sample (line %d): more than a week of samples is not one run", text, d/86400, first.line)
		}
		last = now
		idx, err := num("index", "")
		if err != nil || idx != math.Trunc(idx) || idx > maxGPUIndex {
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
			a = &acc{line: line}
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
	obs := &GPUObservation{file: name, first: first, last: last}
	for i, a := range devs {
		obs.Devices = append(obs.Devices, DeviceStats{Index: i, Samples: a.n, UtilMean: a.util / float64(a.n), PowerMeanW: a.pow / float64(a.n), PowerMaxW: a.pmax,
			at: position{a.line, "index"}})
	}
	sort.Slice(obs.Devices, func(i, j int) bool { return obs.Devices[i].Index < obs.Devices[j].Index })
	span := last.t.Sub(first.t).Seconds()
	period := 0.0
	if n := obs.Devices[0].Samples; n > 1 {
		period = span / float64(n-1)
	}
	obs.WindowS = span + period
	return obs, nil
}

// smiTimeLayout is nvidia-smi's timestamp (local time, no zone).
const smiTimeLayout = "2006/01/02 15:04:05.000"

// ReadInferscope parses an inferscope --sample-only --gpu --json summary
// (at most inputerr.MaxDataFile bytes): gpu.per_device[] with
// utilization_mean_percent and power_{mean,max}_milliwatts; the window is
// duration_secs, at most a week.
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
	if err := json.NewDecoder(inputerr.Reader(r, name, inputerr.MaxDataFile)).Decode(&doc); err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			return nil, ie
		}
		return nil, errf(name, 0, "", "malformed JSON: %v", err)
	}
	if doc.Duration == nil || *doc.Duration <= 0 {
		return nil, errf(name, 0, "duration_secs", "missing or not positive")
	}
	if *doc.Duration > maxWindowS {
		return nil, errf(name, 0, "duration_secs", "%g must be in (0, %d] seconds (a week)", *doc.Duration, maxWindowS)
	}
	if doc.GPU == nil || len(doc.GPU.PerDevice) == 0 {
		return nil, errf(name, 0, "gpu.per_device", "missing or empty (sampled without --gpu?)")
	}
	obs := &GPUObservation{WindowS: *doc.Duration, file: name}
	seen := map[int]bool{}
	for i, d := range doc.GPU.PerDevice {
		field := "gpu.per_device[" + strconv.Itoa(i) + "]"
		if d.Index == nil || d.UtilMean == nil || d.PowerMean == nil || d.PowerMax == nil {
			return nil, errf(name, 0, field, "needs device_index, utilization_mean_percent, power_mean_milliwatts, power_max_milliwatts")
		}
		if err := checkIndex(name, field+".device_index", *d.Index, seen); err != nil {
			return nil, err
		}
		if *d.UtilMean < 0 || *d.UtilMean > 100 || *d.PowerMean < 0 || *d.PowerMax < *d.PowerMean {
			return nil, errf(name, 0, field, "implausible readings (util %g %%, power mean %g mW, max %g mW)", *d.UtilMean, *d.PowerMean, *d.PowerMax)
		}
		obs.Devices = append(obs.Devices, DeviceStats{Index: *d.Index, Samples: d.Samples, UtilMean: *d.UtilMean / 100,
			PowerMeanW: *d.PowerMean / 1000, PowerMaxW: *d.PowerMax / 1000, at: position{0, field + ".device_index"}})
	}
	return obs, nil
}

// checkIndex refuses a negative, absurd or repeated GPU index.
func checkIndex(file, field string, i int, seen map[int]bool) error {
	if i < 0 || i > maxGPUIndex {
		return errf(file, 0, field, "%d is not a GPU index", i)
	}
	if seen[i] {
		return errf(file, 0, field, "GPU %d is listed twice", i)
	}
	seen[i] = true
	return nil
}
