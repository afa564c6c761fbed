package calib

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
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

// ReadMeasured decodes and checks a derived-statistics file.
func ReadMeasured(r io.Reader, name string) (*MeasuredFile, error) {
	dec := json.NewDecoder(io.LimitReader(r, 16<<20))
	dec.DisallowUnknownFields()
	var m MeasuredFile
	if err := dec.Decode(&m); err != nil {
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
		for i, d := range m.GPU.Devices {
			if !(d.UtilMean >= 0 && d.UtilMean <= 1) || !(d.PowerMeanW >= 0) || math.IsInf(d.PowerMeanW, 0) || !(d.PowerMaxW >= 0) || math.IsInf(d.PowerMaxW, 0) {
				return nil, errf(name, 0, fmt.Sprintf("gpu.devices[%d]", i), "util_mean must be in [0, 1] and powers finite and ≥ 0")
			}
		}
		if !(m.GPU.WindowS >= 0) || math.IsInf(m.GPU.WindowS, 0) {
			return nil, errf(name, 0, "gpu.window_s", "%g must be a finite number ≥ 0", m.GPU.WindowS)
		}
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
