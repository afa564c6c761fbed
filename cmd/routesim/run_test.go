package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/report"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

const smallTrace = "../../testdata/traces/arxiv_head60.jsonl"

func runCLI(args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	err = run(args, &o, &e)
	return o.String(), e.String(), err
}

func TestRunGolden(t *testing.T) {
	out, _, err := runCLI("run", "--trace", smallTrace, "--n", "2", "--rate-scale", "4")
	if err != nil {
		t.Fatal(err)
	}
	out = strings.ReplaceAll(out, Version, "VERSION")
	golden := filepath.Join("..", "..", "testdata", "golden", "run_small.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/routesim -update to create it)", err)
	}
	if out != string(want) {
		t.Errorf("summary changed; if intended, run go test ./cmd/routesim -update and inspect the diff.\ngot:\n%s\nwant:\n%s", out, want)
	}
}

func TestRunWritesOutputsDeterministically(t *testing.T) {
	// The same command twice (the output directory is part of it: the
	// exports record it), the first run's files moved aside in between.
	out := filepath.Join(t.TempDir(), "out")
	dirs := []string{out + ".first", out}
	for i := range dirs {
		if _, _, err := runCLI("run", "--trace", "arxiv-window", "--first", "300", "--n", "4", "--policy", "kv-admission",
			"--router-temperature", "0.3", "--profile", "../../testdata/profiles/noisy.json", "--seed", "7", "--out", out); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := os.Rename(out, dirs[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	files := []string{"requests.csv", "summary.csv", "summary.json", "profile_export_aiperf.json", "profile_export.jsonl", "nvml.csv", "manifest.json"}
	for _, f := range files {
		a, err := os.ReadFile(filepath.Join(dirs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirs[1], f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
	}
	entries, _ := os.ReadDir(dirs[0])
	if len(entries) != len(files) {
		t.Errorf("out dir holds %d entries, want exactly %v", len(entries), files)
	}
	// The AIPerf export has AIPerf's metric names, units and keys.
	var ap map[string]json.RawMessage
	b, _ := os.ReadFile(filepath.Join(dirs[0], "profile_export_aiperf.json"))
	if err := json.Unmarshal(b, &ap); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"request_throughput", "request_latency", "time_to_first_token", "inter_token_latency", "output_token_throughput", "benchmark_duration", "input_sequence_length"} {
		if _, ok := ap[k]; !ok {
			t.Errorf("profile_export_aiperf.json lacks %q", k)
		}
	}
	var ttft struct {
		Unit string
		P50  float64
		P99  float64
	}
	json.Unmarshal(ap["time_to_first_token"], &ttft)
	if ttft.Unit != "ms" || !(ttft.P50 > 0 && ttft.P99 >= ttft.P50) {
		t.Errorf("time_to_first_token %+v", ttft)
	}
	// A different seed changes the noisy run.
	c := filepath.Join(t.TempDir(), "c")
	runCLI("run", "--trace", "arxiv-window", "--first", "300", "--n", "4", "--policy", "kv-admission",
		"--router-temperature", "0.3", "--profile", "../../testdata/profiles/noisy.json", "--seed", "8", "--out", c)
	x, _ := os.ReadFile(filepath.Join(dirs[0], "requests.csv"))
	y, _ := os.ReadFile(filepath.Join(c, "requests.csv"))
	if bytes.Equal(x, y) {
		t.Error("seed 8 gave the same requests.csv as seed 7 with service noise on")
	}
}

// TestRunStreamWritesWhatAHeldRunWrites: --stream changes how the trace
// is read, not one byte of any output (besides the command line), with a
// warm-up cut too (the manifest describes the trace, not the counted
// requests).
func TestRunStreamWritesWhatAHeldRunWrites(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--trace", "arxiv-window", "--skip", "40", "--first", "300", "--n", "4", "--policy", "kv",
		"--rate-scale", "2", "--repeat", "2", "--seed", "3", "--warmup", "30"}
	for _, mode := range []string{"held", "streamed"} {
		a := append(append([]string(nil), args...), "--out", filepath.Join(dir, mode))
		if mode == "streamed" {
			a = append(a, "--stream")
		}
		if _, _, err := runCLI(a...); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"requests.csv", "summary.csv", "summary.json", "profile_export.jsonl", "nvml.csv"} {
		a, err := os.ReadFile(filepath.Join(dir, "held", f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "streamed", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between a held and a streamed run", f)
		}
	}
	var m struct{ Trace report.TraceInfo }
	for _, mode := range []string{"held", "streamed"} {
		b, _ := os.ReadFile(filepath.Join(dir, mode, "manifest.json"))
		var got struct{ Trace report.TraceInfo }
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if mode == "held" {
			m = got
		} else if got != m {
			t.Errorf("manifest trace %+v streamed, %+v held", got.Trace, m.Trace)
		}
	}
}

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	ok := `{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [0]}` + "\n"
	malformed := write("malformed.jsonl", ok+"{\"timestamp\": 1,\n")
	missing := write("missing.jsonl", ok+`{"timestamp": 1, "input_length": 10, "hash_ids": [0]}`+"\n")
	negative := write("negative.jsonl", `{"timestamp": 0, "input_length": -10, "output_length": 5, "hash_ids": []}`+"\n")
	mismatch := write("mismatch.jsonl", `{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0]}`+"\n")
	decreasing := write("decreasing.jsonl", `{"timestamp": 9, "input_length": 10, "output_length": 5, "hash_ids": [0]}`+"\n"+ok)
	empty := write("empty.jsonl", "")
	badProfile := write("profile.json", `{"name": "x"}`)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"malformed JSON", []string{"--trace", malformed}, "malformed.jsonl:2: malformed JSON", 1},
		{"missing field", []string{"--trace", missing}, "missing.jsonl:2: output_length: missing", 1},
		{"negative length", []string{"--trace", negative}, "negative.jsonl:1: input_length: -10", 1},
		{"hash ids mismatch", []string{"--trace", mismatch}, "mismatch.jsonl:1: hash_ids: has 1 ids, want", 1},
		{"decreasing timestamps", []string{"--trace", decreasing}, "decreasing.jsonl:2: timestamp", 1},
		{"empty file", []string{"--trace", empty}, "empty.jsonl: trace has no requests", 1},
		{"missing file", []string{"--trace", filepath.Join(dir, "nope.jsonl")}, "nope.jsonl", 1},
		{"unknown GPU", []string{"--gpu", "B300"}, "--gpu: model: unknown GPU \"B300\"", 2},
		{"unknown model", []string{"--model", "gpt-5"}, "--model: model: unknown model \"gpt-5\"", 2},
		{"unknown policy", []string{"--policy", "fastest"}, "--policy: policy: unknown policy \"fastest\"", 2},
		{"bad flag", []string{"--nope"}, "unknown flag: --nope", 2},
		{"bad flag value", []string{"--n", "two"}, "invalid argument \"two\" for \"--n\"", 2},
		{"zero workers", []string{"--n", "0"}, "--n 0 must be in [1, 4096]", 2},
		{"bad block size", []string{"--block-size", "48"}, "--block-size 48 must divide 512", 2},
		{"negative rate", []string{"--rate-scale", "-1"}, "--rate-scale -1", 2},
		{"model len over model", []string{"--max-model-len", "99999"}, "exceeds Qwen3-8B's max_position_embeddings", 2},
		{"bad profile", []string{"--profile", badProfile}, "profile.json", 2},
		{"several problems at once", []string{"--gpu", "B300", "--policy", "x"}, "--policy", 2},
		{"stray argument", []string{"extra"}, "unexpected arguments", 2},
		{"streamed malformed line", []string{"--trace", malformed, "--stream"}, "malformed.jsonl:2: malformed JSON", 1},
		{"streamed sessions", []string{"--workload", "sessions", "--stream"}, "stream", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
			args := append([]string{"run", "--out", out}, tc.args...)
			_, _, err := runCLI(args...)
			if err == nil {
				t.Fatalf("accepted %v", tc.args)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if got := exitCode(err); got != tc.code {
				t.Errorf("exit code %d, want %d", got, tc.code)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("--out %s exists after a failed run", out)
			}
		})
	}
}

func TestUnknownCommandAndHelp(t *testing.T) {
	if _, _, err := runCLI("frobnicate"); err == nil || exitCode(err) != 2 {
		t.Errorf("unknown command: %v", err)
	}
	out, _, err := runCLI()
	if err != nil || !strings.Contains(out, "run") {
		t.Errorf("usage: %q, %v", out, err)
	}
	if o, _, err := runCLI("run", "--help"); err != nil || !strings.Contains(o, "--max-num-batched-tokens") {
		t.Errorf("run --help (on stdout): %v\n%s", err, o)
	}
}

// TestStartTimeStampsOutputs: --start-time sets the wall clock of simulated
// time 0 in nvml.csv and the AIPerf exports; a bad value is a usage error
// naming the flag.
func TestStartTimeStampsOutputs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if _, _, err := runCLI("run", "--first", "50", "--n", "2", "--start-time", "2025-03-04T05:06:07Z", "--out", out); err != nil {
		t.Fatal(err)
	}
	nv, _ := os.ReadFile(filepath.Join(out, "nvml.csv"))
	if lines := strings.SplitN(string(nv), "\n", 3); len(lines) < 2 || !strings.HasPrefix(lines[1], "2025/03/04 05:06:07.100, 0,") {
		t.Errorf("nvml.csv starts %q", lines)
	}
	var ap struct {
		Start string `json:"start_time"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "profile_export_aiperf.json"))
	if err := json.Unmarshal(b, &ap); err != nil || ap.Start != "2025-03-04T05:06:07.000000" {
		t.Errorf("start_time %q (%v)", ap.Start, err)
	}
	for _, bad := range []string{"", "yesterday", "1969-12-31T23:59:59Z", "2026-13-01T00:00:00Z", "9999-01-01T00:00:00Z"} {
		_, _, err := runCLI("run", "--first", "5", "--start-time", bad)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--start-time") {
			t.Errorf("--start-time %s: %v", bad, err)
		}
	}
}
