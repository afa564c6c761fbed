package calib

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
)

// TestAIPerfSummaryUnits: every unit AIPerf writes is converted to the
// quantity routesim compares (latencies in ms, throughput in requests/s);
// an unknown unit, or one of the wrong kind, is refused naming the file
// and the metric's unit field.
func TestAIPerfSummaryUnits(t *testing.T) {
	ttft := func(unit, avg string) string {
		return strings.Replace(goodSummary, `"time_to_first_token":{"unit":"ms","avg":451.4,"p50":360.9,"p90":935.8`,
			`"time_to_first_token":{"unit":"`+unit+`","avg":`+avg+`,"p50":`+avg+`,"p90":`+avg, 1)
	}
	for _, tc := range []struct {
		name, in string
		want     float64 // ttft avg in ms
	}{
		{"ms", ttft("ms", "451.4"), 451.4},
		{"sec", ttft("sec", "0.4514"), 451.4},
		{"s", ttft("s", "0.4514"), 451.4},
		{"us", ttft("us", "451400"), 451.4},
		{"ns", ttft("ns", "451400000"), 451.4},
	} {
		s, err := ReadAIPerfSummary(strings.NewReader(tc.in), "s.json")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v, _ := s.Stat("time_to_first_token", "avg"); v < tc.want*(1-1e-12) || v > tc.want*(1+1e-12) {
			t.Errorf("%s: ttft avg %g ms, want %g", tc.name, v, tc.want)
		}
		if u := s.Metrics["time_to_first_token"].Unit; u != "ms" {
			t.Errorf("%s: unit %q after conversion, want ms", tc.name, u)
		}
	}
	rate := strings.Replace(goodSummary, `{"unit":"requests/sec","avg":4.39}`, `{"unit":"requests/s","avg":4.39}`, 1)
	if s, err := ReadAIPerfSummary(strings.NewReader(rate), "s.json"); err != nil {
		t.Errorf("requests/s: %v", err)
	} else if v, _ := s.Stat("request_throughput", "avg"); v != 4.39 {
		t.Errorf("requests/s: %g", v)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"furlongs", ttft("furlongs", "1"), `s.json: time_to_first_token.unit: "furlongs" is not a time unit`},
		{"tokens as a latency", ttft("tokens", "1"), `s.json: time_to_first_token.unit: "tokens" is not a time unit`},
		{"latency unit missing", strings.Replace(goodSummary, `"inter_token_latency":{"unit":"ms",`, `"inter_token_latency":{"unit":"",`, 1), `s.json: inter_token_latency.unit: "" is not a time unit`},
		{"throughput per minute", strings.Replace(goodSummary, `"requests/sec"`, `"requests/min"`, 1), `s.json: request_throughput.unit: "requests/min" is not a request rate`},
		{"count in tokens", strings.Replace(goodSummary, `"input_config"`, `"request_count":{"unit":"tokens","avg":1000},"input_config"`, 1), `s.json: request_count.unit: "tokens" is not a request count`},
		{"seconds past the bound", ttft("sec", "2e6"), "s.json: time_to_first_token.avg: 2e+06 sec is outside"},
	} {
		_, err := ReadAIPerfSummary(strings.NewReader(tc.in), "s.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestAIPerfRecordUnits: a per-request record's metrics carry their unit;
// it is converted (or refused) like the summary's, at the record's line.
func TestAIPerfRecordUnits(t *testing.T) {
	rec := func(unit string) string {
		return `{"metadata":{"request_start_ns":1,"request_end_ns":9},"metrics":{"time_to_first_token":{"value":0.003,"unit":"` + unit +
			`"},"request_latency":{"value":8,"unit":"ms"},"input_sequence_length":{"value":10,"unit":"tokens"},"output_sequence_length":{"value":2,"unit":"tokens"}}}`
	}
	recs, err := ReadAIPerfRecords(strings.NewReader(rec("sec")), "r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].TTFTMs != 3 {
		t.Errorf("ttft %g ms, want 3", recs[0].TTFTMs)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"furlongs", "\n" + rec("furlongs"), `r.jsonl:2: metrics.time_to_first_token.unit: "furlongs" is not a time unit`},
		{"lengths in ms", strings.Replace(rec("ms"), `"value":10,"unit":"tokens"`, `"value":10,"unit":"ms"`, 1), `r.jsonl:1: metrics.input_sequence_length.unit: "ms" is not a token count`},
	} {
		_, err := ReadAIPerfRecords(strings.NewReader(tc.in), "r.jsonl")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestAIPerfSummaryCounts: counts are whole numbers, and no part exceeds
// the whole (a good count over the request count, a latency's sample
// count over the requests that completed).
func TestAIPerfSummaryCounts(t *testing.T) {
	with := func(extra string) string {
		return strings.Replace(goodSummary, `"input_config"`, extra+`,"input_config"`, 1)
	}
	if _, err := ReadAIPerfSummary(strings.NewReader(with(`"request_count":{"unit":"requests","avg":1000.0},"error_request_count":{"unit":"requests","avg":3.0}`)), "s.json"); err != nil {
		t.Fatalf("valid counts: %v", err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"fractional", with(`"request_count":{"unit":"requests","avg":999.5}`), "s.json: request_count.avg: 999.5 is not a whole number"},
		{"good over all", with(`"request_count":{"unit":"requests","avg":1000},"good_request_count":{"unit":"requests","avg":1001}`), "s.json: good_request_count.avg: 1001 exceeds request_count.avg 1000"},
		{"samples over requests", with(`"request_count":{"unit":"requests","avg":10}`), "s.json: request_latency.count: 1000 exceeds request_count.avg 10"},
		{"fractional sample count", strings.Replace(goodSummary, `"count":997`, `"count":99.7`, 1), "s.json: inter_token_latency.count: 99.7 is not a whole number"},
	} {
		_, err := ReadAIPerfSummary(strings.NewReader(tc.in), "s.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// writeSpec writes files into a temporary directory and returns the path
// of the first, the spec.
func writeSpec(t *testing.T, files ...[2]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, files[0][0])
}

// loadErr loads the spec at path and builds its arms: the error, if any.
func loadErr(path string) error {
	s, err := LoadSpec(path)
	if err != nil {
		return err
	}
	_, err = loadArms(s, nil)
	return err
}

// TestCountsAgainstSetup: a summary export claiming more requests than
// the run's setup offers (100,000 against 100) describes another run and
// is refused, naming the file and the field; one that fits is accepted.
func TestCountsAgainstSetup(t *testing.T) {
	spec := `{"name":"x","runs":[{"name":"a","arm":"a","aiperf_summary":"s.json","setup":{"trace":"conversation","first":100}}]}`
	summary := func(counts string) string {
		return strings.Replace(goodSummary, `"input_config"`, counts+`,"input_config"`, 1)
	}
	count := func(completed, failed string) string {
		s := `"request_count":{"unit":"requests","avg":` + completed + `}`
		if failed != "" {
			s += `,"error_request_count":{"unit":"requests","avg":` + failed + `}`
		}
		return s
	}
	// Latency sample counts of at most 100, as the run would have.
	small := func(s string) string {
		return strings.NewReplacer(`"count":1000`, `"count":90`, `"count":997`, `"count":90`).Replace(s)
	}
	if err := loadErr(writeSpec(t, [2]string{"spec.json", spec}, [2]string{"s.json", small(summary(count("90", "10")))})); err != nil {
		t.Fatalf("counts within the setup: %v", err)
	}
	for _, tc := range []struct{ name, summary, want string }{
		{"completed over offered", summary(count("100000", "")), "s.json: request_count.avg: 100000 requests, but run a's setup offers 100"},
		{"completed and failed over offered", small(summary(count("90", "11"))), "s.json: error_request_count.avg: 90 completed and 11 failed requests, but run a's setup offers 100"},
		{"samples over offered", summary(`"good_request_count":{"unit":"requests","avg":50}`), "s.json: request_latency.count: 1000 samples, but run a's setup offers 100 requests"},
	} {
		err := loadErr(writeSpec(t, [2]string{"spec.json", spec}, [2]string{"s.json", tc.summary}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		var pe *inputerr.Error
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("%s: %T is not a positioned error", tc.name, err)
		}
	}
	// calibrate --derive, which builds no arms, checks the same.
	s, err := LoadSpec(writeSpec(t, [2]string{"spec.json", spec}, [2]string{"s.json", summary(count("100000", ""))}))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckSetups(obs); err == nil || !strings.Contains(err.Error(), "request_count.avg: 100000 requests, but run a's setup offers 100") {
		t.Errorf("derive: %v", err)
	}
}

const smiRows = "2026/06/05 21:58:30.000, 0, 40 %, 100.00 W, 1 MiB\n2026/06/05 21:58:31.000, 0, 60 %, 140.00 W, 1 MiB\n"

// recordsAt is a per-request export of n requests, one a second from
// 2026-06-05 21:58:30 UTC.
func recordsAt(n int) string {
	var b strings.Builder
	const t0 = 1780696710 // 2026-06-05T21:58:30Z
	for i := range n {
		start := (int64(t0) + int64(i)) * 1e9
		b.WriteString(`{"metadata":{"request_start_ns":` + strconv.FormatInt(start, 10) + `,"request_end_ns":` + strconv.FormatInt(start+9e8, 10) +
			`},"metrics":{"time_to_first_token":{"value":100,"unit":"ms"},"request_latency":{"value":900,"unit":"ms"},"input_sequence_length":{"value":500,"unit":"tokens"},"output_sequence_length":{"value":20,"unit":"tokens"}}}` + "\n")
	}
	return b.String()
}

// TestNVMLChecks: NVML samples must come from the run they are paired
// with: a GPU index beyond the setup's GPUs, samples out of time order, a
// sampler window past a week, or samples from another day than the
// AIPerf run are refused at the file's line and field.
func TestNVMLChecks(t *testing.T) {
	run := func(extra, setup string) string {
		return `{"name":"x","runs":[{"name":"a","arm":"a","aiperf_records":"r.jsonl","nvidia_smi":"n.csv",` + extra +
			`"setup":{"trace":"conversation","first":20,"n":2` + setup + `}}]}`
	}
	recs := [2]string{"r.jsonl", recordsAt(20)}
	if err := loadErr(writeSpec(t, [2]string{"spec.json", run("", "")}, recs, [2]string{"n.csv", smiHeader + smiRows})); err != nil {
		t.Fatalf("matching samples: %v", err)
	}
	for _, tc := range []struct{ name, spec, smi, want string }{
		{"GPU beyond the setup", run("", ""), smiHeader + smiRows + "2026/06/05 21:58:31.000, 99, 60 %, 140.00 W, 1 MiB\n",
			"n.csv:4: index: GPU 99, but run a's setup has 2 GPUs (n 2 × tp 1)"},
		{"reversed timestamps", run("", ""), smiHeader + "2026/06/05 21:58:31.000, 0, 40 %, 100.00 W, 1 MiB\n2026/06/05 21:58:30.000, 0, 60 %, 140.00 W, 1 MiB\n",
			"n.csv:3: timestamp: 2026/06/05 21:58:30.000 is before the previous sample's 2026/06/05 21:58:31.000"},
		{"another day", run("", ""), smiHeader + strings.ReplaceAll(smiRows, "2026/06/05", "2026/06/04"),
			"n.csv:2: timestamp: 2026/06/04 21:58:30.000 is more than 14 h outside the AIPerf run in "},
		{"window over a week", run(`"nvml_window_s": 1e308,`, ""), smiHeader + smiRows, "spec.json:1: runs[0].nvml_window_s: 1e+308 must be in [0, 604800] seconds"},
	} {
		err := loadErr(writeSpec(t, [2]string{"spec.json", tc.spec}, recs, [2]string{"n.csv", tc.smi}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	// A derived file's devices are checked against the setup too.
	measured := `{"source":"s","stats":{"ttft_ms_avg":3},"gpu":{"devices":[{"index":8,"samples":3,"util_mean":0.5,"power_mean_w":100,"power_max_w":200}],"window_s":30}}`
	spec := `{"name":"x","runs":[{"name":"a","arm":"a","measured":"m.json","setup":{"n":8}}]}`
	err := loadErr(writeSpec(t, [2]string{"spec.json", spec}, [2]string{"m.json", measured}))
	if want := "m.json: gpu.devices[0].index: GPU 8, but run a's setup has 8 GPUs (n 8 × tp 1)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("derived device: %v, want %q", err, want)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"smi span over a week", smiHeader + "2026/06/05 21:58:30.000, 0, 40 %, 100.00 W, 1 MiB\n2026/06/25 21:58:30.000, 0, 40 %, 100.00 W, 1 MiB\n", "n.csv:3: timestamp: 2026/06/25 21:58:30.000 is 20 days after the first sample"},
		{"smi absurd index", smiHeader + "2026/06/05 21:58:30.000, 1e300, 40 %, 100.00 W, 1 MiB\n", "n.csv:2: index: \"1e300\" is not a GPU index"},
	} {
		if _, err := ReadNvidiaSmiCSV(strings.NewReader(tc.in), "n.csv"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, in, want string }{
		{"measured window", `{"source":"s","stats":{"ttft_ms_avg":1},"gpu":{"devices":[],"window_s":1e308}}`, "m.json: gpu.window_s: 1e+308 must be in [0, 604800]"},
		{"measured negative index", `{"source":"s","stats":{"ttft_ms_avg":1},"gpu":{"devices":[{"index":-1}],"window_s":3}}`, "m.json: gpu.devices[0].index: -1"},
		{"measured duplicate index", `{"source":"s","stats":{"ttft_ms_avg":1},"gpu":{"devices":[{"index":1},{"index":1}],"window_s":3}}`, "m.json: gpu.devices[1].index: GPU 1 is listed twice"},
	} {
		if _, err := ReadMeasured(strings.NewReader(tc.in), "m.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadInferscope(strings.NewReader(`{"duration_secs": 1e308, "gpu":{"per_device":[{"device_index":0,"utilization_mean_percent":5,"power_mean_milliwatts":1,"power_max_milliwatts":2}]}}`), "i.json"); err == nil ||
		!strings.Contains(err.Error(), "i.json: duration_secs: 1e+308 must be in (0, 604800]") {
		t.Errorf("inferscope window: %v", err)
	}
}

// TestSpecFieldsNamed: every option and run field of a spec is
// range-checked where it is read, and each problem is reported at the
// line that sets it, with its value (never a Go pointer).
func TestSpecFieldsNamed(t *testing.T) {
	const body = `{
 "name": "x",
 "options": {
  "max_evals": 2000000,
  "fit": ["step_base_ns", "warp_factor", "step_base_ns"],
  "prior_weight": -2,
  "model_error": 1e9
 },
 "runs": [
  {"name": "a", "arm": "a", "aiperf_summary": "s.json", "setup": {}},
  {"name": "a", "arm": "",
   "aiperf_summary": "s.json",
   "nvml_window_s": 1e308,
   "setup": {
    "gpu": "B300",
    "n": 2
   }}
 ]
}`
	_, err := LoadSpec(writeSpec(t, [2]string{"spec.json", body}))
	if err == nil {
		t.Fatal("accepted")
	}
	text := err.Error()
	for _, want := range []string{
		"spec.json:4: options.max_evals: 2000000 must be in [1, 100000]",
		`spec.json:5: options.fit: unknown coefficient "warp_factor" (known: `,
		`spec.json:5: options.fit: "step_base_ns" is listed twice`,
		"spec.json:6: options.prior_weight: -2 must be in [0, 1000]",
		"spec.json:7: options.model_error: 1e+09 must be in [0.001, 10]",
		`spec.json:11: runs[1].name: "a": every run needs a distinct name`,
		"spec.json:11: runs[1].arm: empty",
		"spec.json:13: runs[1].nvml_window_s: 1e+308 must be in [0, 604800] seconds",
		`spec.json:15: runs[1].setup.gpu: model: unknown GPU "B300"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "0x") {
		t.Errorf("a pointer in the message:\n%s", text)
	}
	// A type error is placed at its field too.
	_, err = LoadSpec(writeSpec(t, [2]string{"spec.json", "{\n \"name\": \"x\",\n \"options\": {\"max_evals\": \"many\"}}"}))
	if err == nil || !strings.Contains(err.Error(), "spec.json:3: options.max_evals: ") {
		t.Errorf("type error: %v", err)
	}
}

// TestReadersBounded: every calibration reader stops at its size limit
// with an error naming the file, instead of reading without end (a spec
// or an export given as /dev/zero) or silently truncating.
func TestReadersBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads past 256 MiB per reader")
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := LoadSpec("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: larger than 64 MiB") {
			t.Errorf("spec /dev/zero: %v", err)
		}
	}
	// Each reader gets a valid beginning that never ends.
	for _, tc := range []struct {
		name, head, fill string
		read             func(io.Reader) error
	}{
		{"summary", `{"x":"`, "x", func(r io.Reader) error { _, err := ReadAIPerfSummary(r, "f"); return err }},
		{"records", recordsAt(1), strings.Repeat(" ", 4095) + "\n", func(r io.Reader) error { _, err := ReadAIPerfRecords(r, "f"); return err }},
		{"nvidia-smi", smiHeader + `"2026/06/05`, "x", func(r io.Reader) error { _, err := ReadNvidiaSmiCSV(r, "f"); return err }},
		{"inferscope", `{"x":"`, "x", func(r io.Reader) error { _, err := ReadInferscope(r, "f"); return err }},
		{"measured", `{"source":"`, "x", func(r io.Reader) error { _, err := ReadMeasured(r, "f"); return err }},
		{"ml.energy", mlHeader, mlRow, func(r io.Reader) error { _, err := ReadMLEnergy(r, "f"); return err }},
		{"osl histogram", `{"x":"`, "x", func(r io.Reader) error { _, err := ReadOSLHistogram(r, "f"); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fill := []byte(strings.Repeat(tc.fill, 1+(64<<10)/len(tc.fill)))
			err := tc.read(io.MultiReader(strings.NewReader(tc.head), &endless{fill: fill}))
			var pe *inputerr.Error
			if err == nil || !errors.As(err, &pe) || pe.File != "f" || !strings.Contains(err.Error(), "larger than 256 MiB") {
				t.Errorf("%v", err)
			}
		})
	}
}

// endless repeats fill forever.
type endless struct {
	fill []byte
	off  int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.fill[e.off:])
		n += c
		e.off = (e.off + c) % len(e.fill)
	}
	return n, nil
}

// TestSetupErrorsPositioned: a run setup's engine-level problems, found
// when the setup is built, are reported at the spec's line for the field
// too, named as the spec's field (not as a flag of run).
func TestSetupErrorsPositioned(t *testing.T) {
	spec := "{\"name\": \"x\",\n \"runs\": [{\"name\": \"a\", \"arm\": \"a\", \"aiperf_summary\": \"s.json\",\n  \"setup\": {\"first\": 100,\n   \"block_size\": 7}}]}"
	err := loadErr(writeSpec(t, [2]string{"spec.json", spec}, [2]string{"s.json", goodSummary}))
	if want := "spec.json:4: runs[0].setup.block_size: 7 must divide 512"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
	var fe *inputerr.FieldError
	if errors.As(err, &fe) {
		t.Errorf("%v still carries a field error a front end would rename", err)
	}
}

// TestSpecDecodeErrorsPositioned: syntax, type and unknown-field errors
// point at their line.
func TestSpecDecodeErrorsPositioned(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"syntax", "{\"name\": \"x\",\n \"runs\": [\n  {\"name\": \"a\",,}]}", "spec.json:3: invalid character ','"},
		{"unknown top-level field", "{\"name\": \"x\",\n \"colour\": 1, \"runs\": []}", "spec.json:2: colour: json: unknown field \"colour\""},
		{"unknown run field", "{\"name\": \"x\", \"runs\": [\n {\"name\": \"a\",\n  \"speed\": 9}]}", "spec.json:3: runs[0].speed: json: unknown field \"speed\""},
		{"run field type", "{\"name\": \"x\", \"runs\": [\n {\"name\": \"a\",\n  \"nvml_window_s\": \"long\"}]}", "spec.json:3: runs[0].nvml_window_s: "},
	} {
		_, err := LoadSpec(writeSpec(t, [2]string{"spec.json", tc.body}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
