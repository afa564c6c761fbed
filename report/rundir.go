package report

import (
	"fmt"
	"io"
	"time"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
)

// RunFiles are the files a run's output directory holds (routesim run
// --out DIR), in the order RunDir.Write writes them; a run with a KV tier
// below the GPU adds ServerMetricsFile after profile_export.jsonl.
var RunFiles = []string{"requests.csv", "summary.csv", "summary.json", "profile_export_aiperf.json", "profile_export.jsonl", "nvml.csv", "manifest.json"}

// RunManifest is a run directory's manifest.json: everything needed to
// reproduce the run's outputs.
type RunManifest struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Command string `json:"command"`
	// StartTime is the wall-clock instant of simulated time 0 (--start-time).
	StartTime string           `json:"start_time"`
	Flags     *scenario.Spec   `json:"flags"`
	Trace     TraceInfo        `json:"trace"`
	Worker    sim.WorkerConfig `json:"worker"`
	Profile   *model.Profile   `json:"profile"`
	KVPerTok  int64            `json:"kv_bytes_per_token"`
}

// TraceInfo names the workload a run replayed: its name, requests and
// span (a closed loop: "sessions" and the requests its users sent).
type TraceInfo struct {
	Name     string `json:"name"`
	Requests int    `json:"requests"`
	SpanNs   int64  `json:"span_ns"`
}

// RunDir says where a run's files go and how they are stamped.
type RunDir struct {
	Dir string
	// Start is the wall-clock instant of simulated time 0 in the files'
	// timestamps.
	Start time.Time
	// Command is the command line that made the run; Version the
	// routesim version that wrote it.
	Command, Version string
}

// Write writes every file of RunFiles into o.Dir for the run of spec
// (built as st) that gave res, summarised as sum: all at once
// (atomicfile.Dir), so the directory holds all of them or none.
func (o RunDir) Write(spec *scenario.Spec, st *scenario.Built, res *sim.Result, sum *sim.Summary) error {
	dir := o.Dir
	d, err := atomicfile.NewDir(dir)
	if err != nil {
		return err
	}
	ti := TraceInfo{Name: "sessions", Requests: len(res.Records)}
	if st.Work != nil {
		ti = TraceInfo{st.Work.Name, st.Work.Len(), int64(st.Work.Span())}
	}
	m := RunManifest{
		Tool: "routesim", Version: o.Version, Command: o.Command, StartTime: o.Start.Format(time.RFC3339Nano), Flags: spec,
		Trace:   ti,
		Worker:  st.Config.Front().Worker,
		Profile: st.Profile, KVPerTok: st.Deploy.Model.KVBytesPerToken(st.Deploy.KVDtypeBytes),
	}
	nv := NVML{
		Samples: res.GPU, TP: st.Deploy.TP, GPUName: st.Deploy.GPU.Name,
		PowerW: st.Profile.PowerAt, MemUsedBytes: st.MemoryUsedBytes(),
	}
	type step struct {
		name  string
		write func(io.Writer) error
	}
	aiperf := AIPerfRun{
		Generator: "routesim " + o.Version, Start: o.Start, Model: ModelID(st.Deploy.Model),
		Dataset: ti.Name, FixedSchedule: st.Work != nil, Seed: spec.Seed,
		Command: o.Command, ArtifactDir: dir, Settings: spec, NVML: &nv,
	}
	steps := []step{
		{"requests.csv", func(w io.Writer) error { return WriteRequestsCSV(w, res.Records, sum.KVTiers != nil) }},
		{"summary.csv", func(w io.Writer) error { return WriteSummaryCSV(w, sum) }},
		{"summary.json", func(w io.Writer) error { return WriteJSON(w, sum) }},
		{"profile_export_aiperf.json", func(w io.Writer) error {
			return WriteAIPerf(w, res.Records, sum, aiperf)
		}},
		{"profile_export.jsonl", func(w io.Writer) error { return WriteAIPerfRecords(w, res.Records, o.Start) }},
	}
	if publishesServerMetrics(sum.KVTiers) {
		steps = append(steps, step{ServerMetricsFile, func(w io.Writer) error { return WriteServerMetrics(w, res, sum.DurationS, aiperf) }})
	}
	steps = append(steps,
		step{"nvml.csv", func(w io.Writer) error { return WriteNvidiaSmiCSV(w, nv, o.Start) }},
		step{"manifest.json", func(w io.Writer) error { return WriteJSON(w, m) }},
	)
	for _, s := range steps {
		w, err := d.Create(s.name)
		if err == nil {
			err = s.write(w)
		}
		if err != nil {
			d.Abort()
			return fmt.Errorf("%s/%s: %w", dir, s.name, err)
		}
	}
	return d.Commit()
}

// ModelID is the model as clients name it: its Hugging Face id if known.
func ModelID(m model.LLM) string {
	if m.HFID != "" {
		return m.HFID
	}
	return m.Name
}
