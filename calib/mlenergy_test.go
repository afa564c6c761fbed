package calib

import (
	"os"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
)

const mlHeader = "task,model_id,gpu_model,num_gpus,tensor_parallel,max_num_seqs,avg_batch_size,avg_power_watts,median_itl_ms,p90_itl_ms,p99_itl_ms,output_throughput_tokens_per_sec,avg_output_len,weight_precision\n"
const mlRow = "lm-arena-chat,meta-llama/Llama-3.1-70B-Instruct,H100,4,4,8,7.98,1765.4,16.57,16.9,21.1,469.7,350.0,bfloat16\n"

func TestReadMLEnergyCSVAndJSONAgree(t *testing.T) {
	rows, err := ReadMLEnergy(strings.NewReader(mlHeader+mlRow), "runs.csv")
	if err != nil {
		t.Fatal(err)
	}
	js := `{"task":"lm-arena-chat","configurations":[{"model_id":"meta-llama/Llama-3.1-70B-Instruct","gpu_model":"H100","num_gpus":4,"tensor_parallel":4,
	"max_num_seqs":8,"avg_batch_size":7.98,"avg_power_watts":1765.4,"median_itl_ms":16.57,"p90_itl_ms":16.9,"p99_itl_ms":21.1,
	"output_throughput_tokens_per_sec":469.7,"avg_output_len":350.0,"weight_precision":"bfloat16","nickname":"Llama"}]}`
	fromJSON, err := ReadMLEnergy(strings.NewReader(js), "lm-arena-chat.json")
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.PowerW != 1765.4/4 || r.TP != 4 || r.MaxNumSeqs != 8 || r.Line != 2 || r.requests() != 1024 {
		t.Errorf("row %+v: power is per GPU (total / num_gpus), line 2, 1024 requests by default", r)
	}
	r.Line = 1
	if fromJSON[0] != r {
		t.Errorf("JSON %+v\nCSV  %+v", fromJSON[0], r)
	}
}

func TestReadMLEnergyRejectsBadInput(t *testing.T) {
	bad := func(old, new string) string { return mlHeader + strings.Replace(mlRow, old, new, 1) }
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "runs.csv:1: no header"},
		{"missing column", strings.Replace(mlHeader, "median_itl_ms,", "", 1), "runs.csv:1: median_itl_ms: missing column"},
		{"no rows", mlHeader, "runs.csv:1: no rows"},
		{"NaN", bad("16.57", "NaN"), "runs.csv:2: median_itl_ms: \"NaN\" must be a finite number"},
		{"negative", bad("469.7", "-1"), "runs.csv:2: output_throughput_tokens_per_sec"},
		{"absurd", bad("350.0", "1e300"), "runs.csv:2: avg_output_len"},
		{"fractional seqs", bad(",8,7.98", ",8.5,7.98"), "runs.csv:2: max_num_seqs: \"8.5\" is not an integer"},
		{"batch over the cap", bad("7.98", "9"), "runs.csv:2: avg_batch_size: 9 exceeds max_num_seqs 8"},
		{"tp over gpus", bad("H100,4,4", "H100,2,4"), "runs.csv:2: tensor_parallel: 4 exceeds num_gpus 2"},
		{"no model", bad("meta-llama/Llama-3.1-70B-Instruct", ""), "runs.csv:2: model_id: empty"},
		{"short row", mlHeader + "lm-arena-chat,x\n", "runs.csv:2"},
		{"bad requests", strings.Replace(mlHeader, "\n", ",num_requests\n", 1) + strings.Replace(mlRow, "\n", ",-3\n", 1), "runs.csv:2: num_requests"},
		{"truncated JSON", `{"configurations":[{"model_id":`, "runs.csv: unexpected end of JSON input"},
		{"JSON no configurations", `{"configurations":[]}`, "runs.csv: configurations: no configurations"},
		{"JSON string number", `{"task":"t","configurations":[{"model_id":"m","gpu_model":"H100","num_gpus":"many"}]}`, "runs.csv:1: num_gpus: \"many\" is not an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadMLEnergy(strings.NewReader(tc.in), "runs.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestReadOSLHistogram(t *testing.T) {
	h, err := ReadOSLHistogram(strings.NewReader(`{"output_length_distribution":{"bins":[0,10,20],"counts":[1,3]}}`), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Mean(); got != 12.5 {
		t.Errorf("mean %v, want 12.5", got)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"bins":[0,10],"counts":[1,2]}`, "need n counts and n+1 bin edges"},
		{`{"bins":[0,10,5],"counts":[1,2]}`, "bins[2] = 5"},
		{`{"bins":[0,10,20],"counts":[0,0]}`, "counts are all 0"},
		{`{"bins":[0,10,20],"counts":[-1,2]}`, "counts[0] = -1"},
		{`{"bins":[0,10,20],"counts":[1,2]`, "m.json: unexpected EOF"},
	} {
		if _, err := ReadOSLHistogram(strings.NewReader(tc.in), "m.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzReadMLEnergy(f *testing.F) {
	f.Add(mlHeader + mlRow)
	f.Add(`{"task":"t","configurations":[{"model_id":"m"}]}`)
	// Absurd counts and sizes: integers written as floats, past int64, a
	// request count over the bound, a batch over max_num_seqs.
	f.Add(mlHeader + strings.Replace(mlRow, ",4,4,8,", ",4.0,4,8.0,", 1))
	f.Add(mlHeader + strings.Replace(mlRow, ",4,4,8,", ",1e300,4,9223372036854775808,", 1))
	f.Add(`{"task":"t","configurations":[{"model_id":"m","gpu_model":"H100","num_gpus":1,"tensor_parallel":1,"max_num_seqs":8,"num_requests":1e12,"avg_batch_size":9}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ReadMLEnergy(strings.NewReader(in), "f")
		if err != nil {
			if _, ok := err.(*inputerr.Error); !ok {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		for _, r := range rows {
			if !(r.PowerW > 0) || r.TP < 1 || r.MaxNumSeqs < 1 || r.AvgBatch > 1.001*float64(r.MaxNumSeqs) {
				t.Fatalf("accepted a bad row %+v", r)
			}
		}
	})
}

func FuzzReadOSLHistogram(f *testing.F) {
	f.Add(`{"bins":[0,10,20],"counts":[1,3]}`)
	f.Fuzz(func(t *testing.T, in string) {
		h, err := ReadOSLHistogram(strings.NewReader(in), "f")
		if err != nil {
			return
		}
		if m := h.Mean(); !(m >= 0) {
			t.Fatalf("mean %v of an accepted histogram", m)
		}
	})
}

// readMLEnergyRuns reads the shipped ML.ENERGY rows.
func readMLEnergyRuns(t *testing.T) []MLEnergyRow {
	t.Helper()
	f, err := os.Open("../testdata/mlenergy-h100-v3/runs.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadMLEnergy(f, "runs.csv")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// mlenergyTestdata reads the embedded ML.ENERGY rows of one deployment.
func mlenergyTestdata(t *testing.T, llm string, tp int, osl string) ([]MLEnergyRow, model.Deployment, *OSLHistogram) {
	t.Helper()
	mine, dep, err := MLEnergySelect{Model: llm, GPU: "H100", TP: tp}.Select(readMLEnergyRuns(t), model.DefaultCatalogue())
	if err != nil {
		t.Fatal(err)
	}
	h, err := os.Open("../testdata/mlenergy-h100-v3/osl-" + osl + ".json")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hist, err := ReadOSLHistogram(h, "osl")
	if err != nil {
		t.Fatal(err)
	}
	return mine, dep, hist
}

func TestMLEnergySelect(t *testing.T) {
	rows := readMLEnergyRuns(t)
	cat := model.DefaultCatalogue()
	if _, _, err := (MLEnergySelect{Model: "Qwen3-32B", GPU: "H100"}).Select(rows, cat); err == nil || !strings.Contains(err.Error(), "several TP degrees (1, 2)") {
		t.Errorf("Qwen3-32B without --tp: %v", err)
	}
	got, dep, err := MLEnergySelect{Model: "meta-llama/Llama-3.1-70B-Instruct", GPU: "H100"}.Select(rows, cat)
	if err != nil || len(got) != 12 || dep.TP != 4 || dep.Model.Name != "Llama-3.1-70B" || dep.Quant != "bf16" {
		t.Errorf("70B: %d rows, %+v, %v", len(got), dep, err)
	}
	if _, _, err := (MLEnergySelect{Model: "Mistral-7B", GPU: "H100"}).Select(rows, cat); err == nil {
		t.Error("a model the catalogue lacks was accepted")
	}
}

// TestFitMLEnergyRecoversAKnownProfile simulates rows with a known
// profile (the prior moved by 10–30 %, a known power line and prompt
// length), fits them from the prior, and checks that the fit finds the
// truth again: the re-simulation, the MAP fit and the power fit agree.
func TestFitMLEnergyRecoversAKnownProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("a few hundred simulations")
	}
	real, dep, osl := mlenergyTestdata(t, "Llama-3.1-70B", 4, "llama-3.1-8b")
	base, priors, _, err := MLEnergyBase(dep)
	if err != nil {
		t.Fatal(err)
	}
	truth := clone(base)
	truth.StepBaseNs *= 1.15
	truth.DecodeNsPerSeq *= 1.3
	truth.DecodeNsPerCtxToken *= 0.85
	truth.PowerBusyW, truth.PowerPJPerFLOP = 400, 1.5
	bench := &MLEnergyBench{Deploy: dep, Engine: MLEnergyEngine(), OSL: osl, MaxOutput: 4096, ISLMean: 700, ISLCV: 1, Seed: 7}
	var rows []MLEnergyRow
	for _, r := range real {
		if r.MaxNumSeqs != 8 && r.MaxNumSeqs != 64 && r.MaxNumSeqs != 256 && r.MaxNumSeqs != 1024 {
			continue
		}
		r.Requests = 768
		st, err := bench.Simulate(r, truth)
		if err != nil {
			t.Fatal(err)
		}
		r.MedianITLMs, r.TokensPerS, r.AvgBatch, r.PowerW = st.MedianITLMs, st.TokensPerS, st.AvgBatch, st.PowerW
		rows = append(rows, r)
	}
	start := *bench
	start.ISLMean = ISLPrior.Centre
	fit, err := FitMLEnergy(&start, rows, base, priors, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fit.Rows {
		for _, e := range []struct {
			name     string
			sim, got float64
		}{{"median ITL", r.Sim.MedianITLMs, r.Row.MedianITLMs}, {"tok/s", r.Sim.TokensPerS, r.Row.TokensPerS}, {"power", r.Sim.PowerW, r.Row.PowerW}} {
			if d := PctErr(e.sim, e.got); d > 3 || d < -3 {
				t.Errorf("max_num_seqs %d: %s %.4g against the truth's %.4g (%+.1f %%)", r.Row.MaxNumSeqs, e.name, e.sim, e.got, d)
			}
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64
	}{{"step_base_ns", fit.Profile.StepBaseNs, truth.StepBaseNs, 0.1}, {"power_pj_per_flop", fit.Profile.PowerPJPerFLOP, truth.PowerPJPerFLOP, 0.1},
		{"power_busy_w", fit.Profile.PowerBusyW, truth.PowerBusyW, 0.05}} {
		if d := c.got/c.want - 1; d > c.tol || d < -c.tol {
			t.Errorf("%s = %.4g, truth %.4g (%+.1f %%)", c.name, c.got, c.want, 100*d)
		}
	}
	t.Logf("ISL %.0f (truth 700), %d simulations", fit.ISLMean, fit.Sims)
}
