package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/routesim/routesim/internal/progress"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/report"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
)

func runCmd(args []string, stdout, stderr io.Writer) (err error) {
	fs := pflag.NewFlagSet("routesim run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	f, src, err := scenarioBase(args, scenario.Defaults())
	if err != nil {
		return err
	}
	defer func() { err = located(err, fs, src) }()
	registerSim(fs, &f)
	fs.String("scenario", "", "scenario file (JSON with the run's settings; flags override it), e.g. testdata/scenarios/*.json")
	out := fs.String("out", "", "write requests.csv, summary.csv, summary.json, profile_export_aiperf.json, profile_export.jsonl, nvml.csv and manifest.json to this directory")
	decisions := fs.String("trace-decisions", "", "write every routing decision (reason, per-worker scores) to this file as JSON lines")
	startTime := fs.String("start-time", defaultStartTime, "wall-clock instant of simulated time 0 in the outputs' timestamps (nvml.csv, AIPerf exports): RFC 3339, or now; the fixed default keeps outputs byte-identical")
	fs.BoolVar(&f.Stream, "stream", false, "read the trace as the run reaches each request instead of holding it, so traces larger than memory replay (memory follows the requests in flight and the records; a trace with session_id lines needs the whole trace and is refused)")
	draws := fs.Int("uncertainty", 0, "also run K coefficient sets drawn from the profile's posterior (same seed) and report each statistic's 10–90 % band (0 = off)")
	showAliases(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: routesim run [flags]\n\nSimulate one trace on N workers under one policy and print the summary.\n%s", groupedUsage(fs, "Run flags", simHelpGroups))
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("run: unexpected arguments %q", fs.Args())}
	}
	if err := applyClientFlags(fs, &f); err != nil {
		return err
	}
	applyEngineDefaults(fs, src, &f)
	if err := checkDraws(*draws); err != nil {
		return err
	}
	if err := checkRunOutputs(*out, *decisions); err != nil {
		return err
	}
	start, err := parseStartTime(*startTime)
	if err != nil {
		return err
	}
	st, err := buildSim(fs, &f)
	if err != nil {
		return err
	}
	run := st.Run(f.Seed)
	if *draws > 0 { // the coefficient draws, validated before anything runs
		if _, _, err := st.Draws(f.Seed, *draws); err != nil {
			return usageError{fmt.Errorf("--uncertainty: %w", err)}
		}
	}
	if *out != "" {
		lock, err := claimDir(*out, "--out", kindRun)
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	var trace *report.DecisionTrace
	if *decisions != "" {
		if trace, err = report.NewDecisionTrace(*decisions); err != nil {
			return fmt.Errorf("--trace-decisions: %w", err)
		}
		run.Config.Decisions = trace
	}
	run.Config.NVML.Series = *out != "" // nvml.csv and the AIPerf telemetry need every sample
	if st.Work != nil {
		tuneGC(st.Work.Len(), gogcSet())
	}
	line := runProgress(stderr, run, st.Work)
	res, pop, err := run.Exec()
	line.Done()
	if err == nil && trace != nil {
		err = commitTrace(trace, *decisions)
	}
	if err != nil {
		if trace != nil {
			trace.Abort()
		}
		return err
	}
	sum := sim.Summarize(res)
	if *draws > 0 {
		if sum.Uncertainty, _, err = run.Bands(*draws, 0, nil); err != nil {
			return usageError{fmt.Errorf("--uncertainty: %w", err)}
		}
		sum.Uncertainty.Place(st.Estimate(), &sum)
	}
	if *out != "" {
		o := report.RunDir{Dir: *out, Start: start, Command: commandLine("run", args), Version: Version}
		if err := o.Write(&f, st, res, &sum); err != nil {
			return err
		}
	}
	if err := printSummary(stdout, &f, st, &sum); err != nil {
		return err
	}
	if pop != nil {
		if _, err = fmt.Fprintln(stdout, pop.Report()); err != nil {
			return err
		}
	}
	if sum.Uncertainty != nil {
		return printBands(stdout, &sum)
	}
	return nil
}

// commitTrace publishes --trace-decisions' file (or discards it after a
// write error, which it returns).
func commitTrace(t *report.DecisionTrace, path string) error {
	if err := t.Err(); err != nil {
		t.Abort()
		return fmt.Errorf("--trace-decisions %s: %w", path, err)
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("--trace-decisions: %w", err)
	}
	return nil
}

// runProgress shows a run's advance on stderr when stderr is a terminal:
// simulated time, requests ended (of the trace's, when known) and wall
// time, erased when the run ends. It returns nil (no line) otherwise.
func runProgress(stderr io.Writer, run *scenario.Run, work *sim.Workload) *progress.Line {
	line := progress.New(stderr)
	if line == nil {
		return nil
	}
	total := 0
	if work != nil {
		total = work.Len()
	}
	run.Config.Progress = func(now sim.Time, ended int) {
		if total > 0 {
			line.Show("routesim: simulated %.0f s, %d of %d requests ended (%.0f %%), %s elapsed",
				now.Seconds(), ended, total, 100*float64(ended)/float64(total), line.Elapsed().Round(time.Second))
			return
		}
		line.Show("routesim: simulated %.0f s, %d requests ended, %s elapsed", now.Seconds(), ended, line.Elapsed().Round(time.Second))
	}
	return line
}

// defaultStartTime is the wall-clock instant of simulated time 0 unless
// --start-time says otherwise: fixed, so the same run writes the same
// bytes.
const defaultStartTime = "2026-01-01T00:00:00Z"

// parseStartTime reads --start-time: RFC 3339 or "now" (the wall clock,
// which makes timestamps differ between otherwise identical runs).
func parseStartTime(v string) (time.Time, error) {
	if v == "now" {
		return time.Now().UTC().Truncate(time.Millisecond), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || t.Year() < 1970 || t.Year() > 9000 {
		return time.Time{}, usageError{fmt.Errorf("--start-time %q: want an RFC 3339 time from 1970 on (2026-01-01T00:00:00Z) or now", v)}
	}
	return t.UTC(), nil
}

// commandLine is the command as a shell would take it back.
func commandLine(cmd string, args []string) string {
	parts := []string{"routesim", cmd}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$`\\*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// checkDraws validates --uncertainty.
func checkDraws(k int) error {
	if k < 0 || k > 1000 {
		return usageError{fmt.Errorf("--uncertainty %d must be in [0, 1000]", k)}
	}
	return nil
}

// printBands prints each banded statistic's point estimate next to its
// 10–90 % band over the coefficient draws.
func printBands(w io.Writer, s *sim.Summary) error {
	u := s.Uncertainty
	fmt.Fprintf(w, "\nmodel uncertainty: %d coefficient sets drawn from the profile's posterior, same seed; 10th–90th percentile band\n  (%s)\n", u.Draws, u.Method)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "statistic\testimate\tband low\tband high\t\n")
	end := func(v *float64, scale float64) string {
		if v == nil {
			return "undefined"
		}
		return fmt.Sprintf("%.4g", *v*scale)
	}
	for _, k := range sim.BandKeys {
		scale, name := 1.0, k
		if k == "completeness" || k == "rejected_share" || k == "gpu_util_mean" {
			scale, name = 100, k+" (%)"
		}
		v := sim.BandValue(s, k)
		est := "undefined"
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			est = fmt.Sprintf("%.4g", v*scale)
		}
		b := u.Bands[k]
		if slices.Contains(u.Outside, k) {
			est += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, est, end(b[0], scale), end(b[1], scale))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "estimate: %s.\n", u.Estimate)
	if err == nil && len(u.Outside) > 0 {
		_, err = fmt.Fprintf(w, "* outside its band: %s.\n", u.WhyOutside)
	}
	return err
}

// checkRunOutputs refuses a --trace-decisions file that would replace one
// of --out's files (or land in another command's directory).
func checkRunOutputs(out, decisions string) error {
	if decisions == "" {
		return nil
	}
	files := []outputFile{{"--trace-decisions " + decisions, decisions}}
	if out != "" {
		names := append(slices.Clone(report.RunFiles), report.ServerMetricsFile) // written when a tier publishes metrics
		files = append(dirOutputs("--out", out, names...), files...)
	}
	if err := checkOutputs(files); err != nil {
		return err
	}
	return checkFileOutput("--trace-decisions", decisions, out, kindRun)
}

func printSummary(w io.Writer, f *scenario.Spec, st *scenario.Built, s *sim.Summary) error {
	p := st.Profile
	fmt.Fprintf(w, "routesim %s: %s (%d requests), %d × %s, %s tp%d, policy %s, seed %d\n",
		Version, workloadName(st, f), s.Offered, st.Config.NumWorkers(), st.Deploy.GPU.Name, st.Deploy.Model.Name, st.Deploy.TP, f.Policy, f.Seed)
	printFileInputs(w, st.Deploy)
	printImplied(w, st.Deploy, p)
	trust := trustLine(f, p, st.Deploy)
	if wk := st.Config.Front().Worker; wk.Engine == sim.TRTLLM {
		printTRTLLMHeader(w, p, wk, trust)
	} else {
		fmt.Fprintf(w, "profile %s [%s]; KV %d blocks × %d tokens per worker; max-num-batched-tokens %d, max-num-seqs %d, max-model-len %d\n",
			p.Name, p.Kind, wk.KVBlocks, wk.BlockSize, wk.MaxNumBatchedTokens, wk.MaxNumSeqs, wk.MaxModelLen)
		if trust != "" {
			fmt.Fprintln(w, trust)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "offered\tcompleted\tcompleteness\t%s\t\n", strings.Join(rejectedKeys(), "\t"))
	fmt.Fprintf(tw, "%d\t%d\t%.1f%%\t", s.Offered, s.Completed, 100*s.Completeness)
	for _, k := range rejectedKeys() {
		fmt.Fprintf(tw, "%d\t", s.Rejected[k])
	}
	fmt.Fprint(tw, "\n\n")
	fmt.Fprint(tw, "latency (ms)\tavg\tp50\tp90\tp99\tover\t\n")
	for _, m := range []struct {
		name string
		d    sim.Dist
	}{{"TTFT", s.TTFTMs}, {"ITL", s.ITLMs}, {"E2E", s.E2EMs}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d completed\t\n", m.name, ms(m.d.Avg), ms(m.d.Pct("p50")), ms(m.d.Pct("p90")), ms(m.d.Pct("p99")), m.d.Count)
	}
	fmt.Fprintf(tw, "TTFT, rejections as ∞\t\t%s\t%s\t%s\t%d offered\t\n", offered(s, "p50"), offered(s, "p90"), offered(s, "p99"), s.Offered)
	tw.Flush()
	fmt.Fprintf(w, "\nthroughput %.3f req/s, %.1f output tok/s over %.1f s; prefix-cache hit rate %.1f%%; preemptions %d\n",
		s.RequestsPerS, s.OutputTokensPerS, s.DurationS, 100*s.PrefixHitRate, s.Preemptions)
	if s.Retries > 0 || s.Parked > 0 {
		fmt.Fprintf(w, "client retries %d (rejections retried: %s); router queue: %d parked, wait avg %s ms, p99 %s ms\n",
			s.Retries, countList(s.RetriedRejections), s.Parked, ms(s.RouterQueueMs.Avg), ms(s.RouterQueueMs.Pct("p99")))
	}
	fmt.Fprintf(w, "GPU (simulated NVML, %s): utilization mean %.0f%% (skew %.1f pts), power mean %.0f W, max %.0f W; per GPU:",
		p.Kind, 100*s.GPU.UtilMean, 100*s.GPU.UtilSkew, s.GPU.PowerMeanW, s.GPU.PowerMaxW)
	if len(s.GPU.GPUs) <= maxListedGPUs {
		for i, g := range s.GPU.GPUs {
			fmt.Fprintf(w, " %d:%.0f%%", i, 100*g.UtilMean)
		}
	} else {
		// A fleet: the extremes and the median, the rest in summary.json.
		idx := make([]int, len(s.GPU.GPUs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return s.GPU.GPUs[idx[a]].UtilMean < s.GPU.GPUs[idx[b]].UtilMean })
		at := func(k int) string { return fmt.Sprintf("%.0f%% (GPU %d)", 100*s.GPU.GPUs[idx[k]].UtilMean, idx[k]) }
		fmt.Fprintf(w, " lowest %s, median %s, highest %s (all %d in summary.json)", at(0), at(len(idx)/2), at(len(idx)-1), len(idx))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// printTRTLLMHeader is the summary's header lines after the first for
// TensorRT-LLM workers (and the trust line, if any), with TensorRT-LLM's names for the settings (a vLLM run's header
// names no engine: vLLM is the default, and its summary stays as it was).
func printTRTLLMHeader(w io.Writer, p *model.Profile, wk sim.WorkerConfig, trust string) {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	fmt.Fprintf(w, "engine trtllm (TensorRT-LLM 1.3.0rc14, PyTorch executor): capacity scheduler %s, chunked prefill %s, overlap scheduler %s, block reuse %s\n",
		wk.CapacityPolicy, onOff(wk.ChunkedPrefill), onOff(!wk.NoOverlap), onOff(!wk.NoPrefixCaching))
	fmt.Fprintf(w, "profile %s [%s] (%s); KV %d blocks × %d tokens per worker; max_num_tokens %d, max_batch_size %d, max_seq_len %d\n",
		p.Name, p.Kind, trtllmStepTimes(p), wk.KVBlocks, wk.BlockSize, wk.MaxNumBatchedTokens, wk.MaxNumSeqs, wk.MaxModelLen)
	if trust != "" {
		fmt.Fprintln(w, trust)
	}
	fmt.Fprintf(w, "%s (routesim stacks)\n\n", stackLine(p))
}

// trtllmStepTimes says where a TensorRT-LLM run's step times come from.
func trtllmStepTimes(p *model.Profile) string {
	if p.Engine != model.EngineTRTLLM {
		return "step times not calibrated for TensorRT-LLM"
	}
	if from, ok := model.TransferredFrom(p); ok {
		return "TensorRT-LLM step times transferred from " + from + ", not fitted for this deployment"
	}
	if p.Kind == "measured" && strings.HasPrefix(p.Source, "routesim calibrate --trtllm-bench") {
		return "TensorRT-LLM step times fitted to published trtllm-bench throughput"
	}
	if p.Kind == "measured" {
		return "TensorRT-LLM step times fitted"
	}
	return "TensorRT-LLM kernel prior, not fitted"
}

// maxListedGPUs is how many GPUs the summary lists one by one.
const maxListedGPUs = 32

// countList renders counts by status as "rejected-busy 12, … " in
// EndStatuses order ("none" when empty).
func countList(m map[string]int) string {
	var parts []string
	for _, k := range rejectedKeys() {
		if n := m[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func rejectedKeys() []string {
	var out []string
	for _, st := range sim.EndStatuses {
		out = append(out, st.String())
	}
	return out
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func offered(s *sim.Summary, key string) string {
	if p := s.TTFTOfferedMs[key]; p != nil {
		return ms(*p)
	}
	return "undefined"
}

// workloadName names the offered workload as it really runs: a rate
// scale other than 1 is shown (for a synthetic stream, with the
// effective rate).
func workloadName(st *scenario.Built, f *scenario.Spec) string {
	if st.Work == nil {
		return "closed-loop sessions"
	}
	switch {
	case f.RateScale == 1 || f.RateScale == 0:
		return st.Work.Name
	case f.Workload == "synthetic":
		return fmt.Sprintf("%s × rate scale %g = %g req/s", st.Work.Name, f.RateScale, f.Synthetic.RatePerS*f.RateScale)
	}
	return fmt.Sprintf("%s at rate scale %g", st.Work.Name, f.RateScale)
}

// writeJSON writes v as routesim writes the JSON files people read
// (report.WriteJSON).
func writeJSON(w io.Writer, v any) error { return report.WriteJSON(w, v) }
