package calib

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/routesim/routesim/internal/inputerr"
)

// MeasuredFile is one run's measured statistics, derived from its original
// exports: what a fit compares (latency percentiles and means in ms,
// requests/s, GPU utilization 0..1) and the NVML per-device summaries, with
// the citation of the data they come from. It lets a repository keep the
// figures of a run whose files it may not redistribute.
type MeasuredFile struct {
	Source string          `json:"source"`
	Run    string          `json:"run"`
	Stats  Stats           `json:"stats"`
	GPU    *GPUObservation `json:"gpu,omitempty"`
}

// ReadMeasured decodes and checks a derived-statistics file (at most
// inputerr.MaxDataFile bytes).
func ReadMeasured(r io.Reader, name string) (*MeasuredFile, error) {
	dec := json.NewDecoder(inputerr.Reader(r, name, inputerr.MaxDataFile))
	dec.DisallowUnknownFields()
	var m MeasuredFile
	if err := dec.Decode(&m); err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			return nil, ie
		}
		return nil, errf(name, 0, "", "%v", err)
	}
	if m.Source == "" {
		return nil, errf(name, 0, "source", "a derived file must cite its source")
	}
	if len(m.Stats) == 0 {
		return nil, errf(name, 0, "stats", "no statistics")
	}
	keys := make([]string, 0, len(m.Stats))
	for k := range m.Stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := statWeights[k]; !ok {
			return nil, errf(name, 0, "stats."+k, "unknown statistic (known: %v)", statOrder)
		}
		if v := m.Stats[k]; !(v > 0) || math.IsInf(v, 0) {
			return nil, errf(name, 0, "stats."+k, "%g must be a finite number > 0", v)
		}
	}
	if v, ok := m.Stats["completeness"]; ok && v > 1 {
		return nil, errf(name, 0, "stats.completeness", "%g is a share of requests: it must be in (0, 1]", v)
	}
	if m.GPU != nil {
		seen := map[int]bool{}
		for i := range m.GPU.Devices {
			d := &m.GPU.Devices[i]
			field := fmt.Sprintf("gpu.devices[%d]", i)
			if err := checkIndex(name, field+".index", d.Index, seen); err != nil {
				return nil, err
			}
			d.at = position{0, field + ".index"}
			if !(d.UtilMean >= 0 && d.UtilMean <= 1) || !(d.PowerMeanW >= 0) || math.IsInf(d.PowerMeanW, 0) || !(d.PowerMaxW >= 0) || math.IsInf(d.PowerMaxW, 0) {
				return nil, errf(name, 0, field, "util_mean must be in [0, 1] and powers finite and ≥ 0")
			}
		}
		if !(m.GPU.WindowS >= 0 && m.GPU.WindowS <= maxWindowS) {
			return nil, errf(name, 0, "gpu.window_s", "%g must be in [0, %d] seconds (a week)", m.GPU.WindowS, maxWindowS)
		}
		m.GPU.file = name
	}
	return &m, nil
}

// Derive returns each observed run's statistics as a MeasuredFile citing
// source: how a repository replaces exports it may not redistribute.
func Derive(obs []Observed, source string) []MeasuredFile {
	out := make([]MeasuredFile, len(obs))
	for i := range obs {
		o := &obs[i]
		out[i] = MeasuredFile{Source: source, Run: o.Run.Name, Stats: measuredStats(o), GPU: o.GPU}
	}
	return out
}
