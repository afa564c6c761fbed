package validate

import (
	"bytes"
	"encoding/json"
	"path"
	"testing"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
)

func TestCasesAreComplete(t *testing.T) {
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 4 {
		t.Fatalf("%d cases", len(cases))
	}
	regimes := map[string]int{}
	for _, c := range cases {
		regimes[c.Regime]++
		files := []string{"SOURCE.md", c.Predict, c.Fit}
		if c.TRTBench != nil {
			files = append(files, c.TRTBench.Rows)
			checkTRTBenchCase(t, c)
		} else if c.Predict == "" {
			t.Errorf("%s: names no runs to predict", c.Name)
		}
		for _, f := range files {
			if f == "" {
				continue
			}
			if _, err := dataFS.ReadFile(path.Join("data", c.Name, f)); err != nil {
				t.Errorf("%s: %v", c.Name, err)
			}
		}
		if len(c.Checked) == 0 || c.Title == "" || c.Note == "" {
			t.Errorf("%s: needs a title, a note and checked statistics", c.Name)
		}
		if c.Regime == "saturated" && len(c.SaturatedStats) != 3 {
			t.Errorf("%s: a saturated case names its 3 banded statistics", c.Name)
		}
	}
	if regimes["saturated"] < 2 || regimes["unsaturated"] < 1 {
		t.Errorf("regimes %v: want ≥ 2 saturated and ≥ 1 unsaturated case", regimes)
	}
}

// TestRunIsDeterministic runs the fastest case (a prior-only prediction)
// twice: same rows, bands included, to the bit.
func TestRunIsDeterministic(t *testing.T) {
	opt := Options{Cases: []string{"rtx4090-llama3.1-8b-llmservingsim"}, Draws: 6}
	a, err := Run(opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Jobs = 1
	b, err := Run(opt)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("two runs (different --jobs) differ")
	}
	if len(a) != 1 || len(a[0].Rows) == 0 || len(a[0].Checks) != 3 {
		t.Fatalf("result %+v", a)
	}
	for _, r := range a[0].Rows {
		if r.BandLo == nil || r.BandHi == nil || *r.BandLo > *r.BandHi {
			t.Errorf("%s %s: band %v–%v", r.Arm, r.Stat, r.BandLo, r.BandHi)
		}
	}
	if _, err := Run(Options{Cases: []string{"no-such-case"}}); err == nil {
		t.Error("unknown case accepted")
	}
}

func TestAcceptance(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	row := func(arm, stat string, meas, pred, lo, hi float64) calib.PredRow {
		return calib.PredRow{Arm: arm, Stat: stat, Measured: meas, Predicted: pred, Ratio: pred / meas, ErrPct: 100 * (pred - meas) / meas,
			BandLo: f(lo), BandHi: f(hi), InBand: meas >= lo && meas <= hi}
	}
	sat := Case{Regime: "saturated", SaturatedStats: []string{"ttft_ms_p50", "ttft_ms_avg", "ttft_ms_p90"}}
	for _, tc := range []struct {
		name string
		c    Case
		rows []calib.PredRow
		pass []bool
	}{
		{"saturated, all good", sat, []calib.PredRow{row("a", "ttft_ms_p50", 10, 12, 9, 14), row("a", "ttft_ms_avg", 11, 13, 10, 15), row("a", "ttft_ms_p90", 20, 30, 25, 35)}, []bool{true, true, true}},
		{"saturated, factor and band", sat, []calib.PredRow{row("a", "ttft_ms_p50", 10, 16, 15, 20), row("a", "ttft_ms_avg", 11, 13, 12, 15), row("a", "ttft_ms_p90", 20, 30, 25, 35)}, []bool{false, true, false}},
		{"unsaturated 15 %", Case{Regime: "unsaturated", Checked: []string{"itl_ms_avg"}}, []calib.PredRow{row("a", "itl_ms_avg", 10, 11.4, 9, 12), row("b", "itl_ms_avg", 10, 8.4, 9, 12)}, []bool{true, false}},
	} {
		checks := accept(tc.c, tc.rows)
		if len(checks) != len(tc.pass) {
			t.Errorf("%s: %d checks, want %d", tc.name, len(checks), len(tc.pass))
			continue
		}
		for i, ch := range checks {
			if ch.Pass != tc.pass[i] {
				t.Errorf("%s: check %s pass=%v, want %v (%s)", tc.name, ch.Name, ch.Pass, tc.pass[i], ch.What)
			}
		}
	}
}

// checkTRTBenchCase reads a trtllm-bench case's table and checks that its
// selections hold rows, that it fits on some and predicts others, without
// fitting anything.
func checkTRTBenchCase(t *testing.T, c Case) {
	t.Helper()
	tc := c.TRTBench
	b, err := dataFS.ReadFile(path.Join("data", c.Name, tc.Rows))
	if err != nil {
		t.Errorf("%s: %v", c.Name, err)
		return
	}
	all, err := calib.ReadTRTBench(bytes.NewReader(b), tc.Rows)
	if err != nil {
		t.Errorf("%s: %v", c.Name, err)
		return
	}
	cat := model.DefaultCatalogue()
	mine, _, err := calib.TRTBenchSelect{GPU: tc.GPU, Model: tc.Model, TP: tc.TP}.Select(all, cat)
	if err != nil {
		t.Errorf("%s: %v", c.Name, err)
		return
	}
	fit, held, err := calib.SplitTRTBench(mine, tc.FitRows)
	if err != nil || len(fit) == 0 || len(held) == 0 {
		t.Errorf("%s: %d rows fitted, %d predicted (%v): a case fits on some and predicts others", c.Name, len(fit), len(held), err)
	}
	for _, tr := range tc.Transfer {
		if _, _, err := tr.Select(all, cat); err != nil {
			t.Errorf("%s: transfer: %v", c.Name, err)
		}
	}
}
