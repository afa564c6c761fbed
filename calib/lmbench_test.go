package calib

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
	"github.com/routesim/routesim/sim"
)

// lmbenchCSV: two users; user 7 asks twice, 10 s apart (its gap), the
// second question's prompt holding the first.
const lmbenchCSV = `prompt_tokens,generation_tokens,ttft,generation_time,user_id,question_id,launch_time,finish_time
1100.0,100.0,0.2,2.0,7,1,1000.0,1002.2
1300.0,100.0,0.25,2.1,7,2,1010.0,1012.35
900.0,50.0,0.15,1.0,8,1,1004.0,1005.15
`

func TestReadLMBench(t *testing.T) {
	p, err := ReadLMBench(strings.NewReader(lmbenchCSV), "l.csv")
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by launch: user 7's first, user 8's, user 7's second.
	if p.Requests != 3 || p.InputLens[1] != 900 || p.Users[2] != 7 || p.SendS[2] != 10 || p.UserGapS != 10 {
		t.Fatalf("point %+v", p)
	}
	if math.Abs(p.Stats["requests_per_s"]-3/12.35) > 1e-12 || math.Abs(p.Stats["itl_ms_avg"]-(2000.0/99+2100.0/99+1000.0/49)/3) > 1e-9 {
		t.Errorf("stats %v", p.Stats)
	}
	tr := p.Trace(benchRNG())
	// 1300 tokens of user 7's second question open with the 1100 of its
	// first: two whole 512-token blocks shared, the third new.
	a, b := tr.Requests[0].HashIDs, tr.Requests[2].HashIDs
	if len(b) != 3 || b[0] != a[0] || b[1] != a[1] || b[2] == a[2] || tr.Requests[1].HashIDs[0] == a[0] {
		t.Errorf("hash ids %v %v %v", a, tr.Requests[1].HashIDs, b)
	}
}

func TestReadLMBenchRejectsBadFiles(t *testing.T) {
	header := strings.SplitN(lmbenchCSV, "\n", 2)[0] + "\n"
	row := "1100.0,100.0,0.2,2.0,7,1,1000.0,1002.2\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "l.csv:1: no header"},
		{"no rows", header, "l.csv:1: no rows"},
		{"missing column", "prompt_tokens,ttft\n1,2\n", "l.csv:1: generation_tokens: missing column"},
		{"text", header + strings.Replace(row, "0.2,", "fast,", 1), `l.csv:2: ttft: column 3: "fast" is not a finite number`},
		{"NaN", header + strings.Replace(row, "0.2,", "NaN,", 1), `l.csv:2: ttft: column 3: "NaN" is not a finite number`},
		{"fractional tokens", header + strings.Replace(row, "1100.0", "1100.5", 1), "l.csv:2: prompt_tokens: column 1: 1100.5 is not a whole number"},
		{"no output", header + strings.Replace(row, ",100.0,", ",0.0,", 1), "l.csv:2: generation_tokens: column 2: 0 is not a whole number in [1"},
		{"negative ttft", header + strings.Replace(row, "0.2,", "-0.2,", 1), "l.csv:2: ttft: column 3: -0.2 s is outside"},
		{"finish before launch", header + strings.Replace(row, "1002.2", "999.0", 1), "l.csv:2: finish_time: column 8: 999.000000 is before launch_time"},
		{"short row", header + "1100.0,100.0,0.2\n", "l.csv:2: character 1: wrong number of fields"},
		{"bad quote", header + "\"1100.0,100.0\n", "l.csv:2: character 15: extraneous or missing \" in quoted-field"},
		{"question order", header + row + strings.Replace(strings.Replace(row, ",7,1,", ",7,1,", 1), "1000.0,1002.2", "1010.0,1012.2", 1), "l.csv:3: question_id: user 7 asks question 1 after question 1 (line 2)"},
		{"shrinking prompt", header + row + strings.Replace(strings.Replace(row, ",7,1,", ",7,2,", 1), "1100.0,100.0,0.2,2.0,7,2,1000.0,1002.2", "900.0,100.0,0.2,2.0,7,2,1010.0,1012.2", 1), "l.csv:3: prompt_tokens: user 7's question 2 has 900 prompt tokens"},
		{"sent before the answer", header + row + "1300.0,100.0,0.2,2.0,7,2,1001.0,1003.2\n", "l.csv:3: launch_time: column 7: user 7 sent question 2 at 1001.000000, before question 1 finished"},
		{"a week later", header + row + "1300.0,100.0,0.2,2.0,8,1,1e9,1000000002.2\n", "l.csv:3: launch_time: column 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadLMBench(strings.NewReader(tc.in), "l.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestLMBenchUsersAreClosedLoop: a user's next question is sent its gap
// after the previous one was sent, or when that one ended if later; the
// re-simulation serves every row of the file.
func TestLMBenchUsersAreClosedLoop(t *testing.T) {
	p, err := ReadLMBench(strings.NewReader(lmbenchCSV), "l.csv")
	if err != nil {
		t.Fatal(err)
	}
	s := benchSetup()
	a := &arm{spec: s}
	a.spec.Workload, a.spec.Synthetic = "synthetic", benchPlaceholder
	if a.built, err = a.spec.Build(nil); err != nil {
		t.Fatal(err)
	}
	if err := a.benchWorkload(p); err != nil {
		t.Fatal(err)
	}
	for _, slow := range []float64{1, 40} { // 40× slower steps: answers outlast the gap
		prof := *a.built.Profile
		prof.StepBaseNs *= slow
		r := a.built.Run(s.Seed)
		r.Config = r.Config.WithProfile(&prof)
		res, err := a.run(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) != 3 {
			t.Fatalf("%d records", len(res.Records))
		}
		first, second := res.Records[0], res.Records[2] // user 7's questions
		want := max(first.Arrival+10*sim.Second, first.End)
		if second.Arrival != want {
			t.Errorf("slow ×%g: second question sent at %v, want max(first sent + gap, first ended) = %v", slow, second.Arrival, want)
		}
	}
}

// TestLMBenchReportGolden: the calibration report of three points of
// llm-d's LMBench sweep (testdata/bench/lmbench-*.csv, see SOURCE.md):
// fit on 0.1 and 0.3 QPS, 0.7 QPS predicted with bands.
func TestLMBenchReportGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for a few seconds")
	}
	setup := scenario.Defaults()
	setup.N, setup.Policy, setup.GPU, setup.Model, setup.BlockSize = 1, "round-robin", "A100-SXM4-80GB", "Llama-3.1-8B", 16
	setup.MaxNumBatchedTokens, setup.PrefixCaching, setup.VLLMVersion = 1024, false, "0.8.5"
	var files []BenchFile
	for _, q := range []string{"0.1", "0.3", "0.7"} {
		files = append(files, BenchFile{"lmbench", filepath.Join("testdata", "bench", "lmbench-"+q+".csv")})
	}
	spec, err := BenchSpec(files, setup, model.KernelPriorName)
	if err != nil {
		t.Fatal(err)
	}
	fit, rest, err := spec.Split([]string{"lmbench-0.1", "lmbench-0.3"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(fit, Options{MaxEvals: 100, NoiseSigmas: []float64{0}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Predict(rest, res.Profile, res.Profile.Posterior, 8, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Report.String() + "\npredicted points:\n" + PredictionTable(rows)
	checkGolden(t, filepath.Join("testdata", "bench", "lmbench-report.golden"), got)
}

// FuzzReadLMBench: the LMBench reader never panics; what it refuses it
// refuses with an error naming the file; what it accepts re-simulates
// every row, each user's prompts growing.
func FuzzReadLMBench(f *testing.F) {
	header := strings.SplitN(lmbenchCSV, "\n", 2)[0] + "\n"
	for _, s := range []string{lmbenchCSV, header, "", "prompt_tokens\n1\n",
		header + "1100.0,100.0,NaN,2.0,7,1,1000.0,1002.2\n",
		header + "1100.0,100.0,0.2,2.0,7,1,1000.0,999.0\n",
		header + "\"1100.0,100.0\n",
		header + "1e300,100.0,0.2,2.0,7,1,1000.0,1002.2\n",
	} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "bench", "lmbench-0.3.csv")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadLMBench(strings.NewReader(string(b)), "l.csv")
		if err != nil {
			var pe *inputerr.Error
			if !errors.As(err, &pe) || pe.File != "l.csv" {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		if p.promptVolume() > 1e8 {
			return
		}
		tr := p.Trace(benchRNG())
		if len(tr.Requests) != p.Requests || len(p.Users) != p.Requests {
			t.Fatalf("%d requests, %d users for %d rows", len(tr.Requests), len(p.Users), p.Requests)
		}
		for i, r := range tr.Requests {
			if r.InputTokens < 1 || r.OutputTokens < 1 || (i > 0 && r.ArrivalNs < tr.Requests[i-1].ArrivalNs) {
				t.Fatalf("request %d: %+v", i, r)
			}
		}
	})
}

// TestLoadPointRefusesAWarmUp: a load point is measured whole, so a
// setup with a warm-up window is refused at the spec's line for it.
func TestLoadPointRefusesAWarmUp(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "l.csv"), []byte(lmbenchCSV), 0o644)
	spec := "{\"name\": \"x\", \"runs\": [{\"name\": \"a\", \"arm\": \"a\", \"lmbench\": \"l.csv\",\n\"setup\": {\"n\": 1,\n\"warmup_s\": 5}}]}"
	os.WriteFile(filepath.Join(dir, "spec.json"), []byte(spec), 0o644)
	s, err := LoadSpec(filepath.Join(dir, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Fit(s, Options{MaxEvals: 1, NoPosterior: true})
	if err == nil || !strings.Contains(err.Error(), "spec.json:3: runs[0].setup.warmup_s: 5: a load point is measured whole") {
		t.Fatalf("got %v", err)
	}
}
