package calib

import (
	"fmt"
	"strings"
)

// TRTBenchReport is the report of a trtllm-bench fit (calibrate's
// report.json): the profile, each fitted efficiency term against its
// prior, the fitted rows and the rows predicted without being fitted on.
type TRTBenchReport struct {
	Profile     string              `json:"profile"`
	Terms       []TRTBenchTerm      `json:"terms"`
	Fitted      []TRTBenchReportRow `json:"fitted"`
	Predicted   []TRTBenchReportRow `json:"predicted,omitempty"`
	Simulations int                 `json:"simulations"`
}

// TRTBenchTerm is one fitted coefficient: its prior value and spread, its
// fitted value and posterior spread (log units).
type TRTBenchTerm struct {
	Name           string  `json:"name"`
	Prior          float64 `json:"prior"`
	Value          float64 `json:"value"`
	PriorSDLog     float64 `json:"prior_sd_log"`
	PosteriorSDLog float64 `json:"posterior_sd_log"`
}

// TRTBenchReportRow is one row measured against simulated.
type TRTBenchReportRow struct {
	ISLOSL    string      `json:"isl_osl"`
	Requests  int         `json:"requests"`
	Measured  float64     `json:"measured_output_tok_s"`
	Simulated TRTBenchSim `json:"simulated"`
	ErrPct    float64     `json:"error_pct"`
}

func trtbenchReportRow(r TRTBenchRow, s TRTBenchSim) TRTBenchReportRow {
	return TRTBenchReportRow{ISLOSL: r.Arm(), Requests: r.Requests, Measured: r.TokensPerS, Simulated: s, ErrPct: PctErr(s.TokensPerS, r.TokensPerS)}
}

// Report predicts held (rows of the deployment not fitted on) with the
// fitted profile and returns the fit's report and its text (calibrate's
// report.txt): the terms, the fitted rows and the predicted ones.
func (res *TRTBenchResult) Report(held []TRTBenchRow) (*TRTBenchReport, string, error) {
	p := res.Profile
	rep := &TRTBenchReport{Profile: p.Name, Simulations: res.Fit.Sims}
	for i, name := range res.Fit.Params {
		c := mustCoef(name)
		t := TRTBenchTerm{Name: name, Prior: *c.Field(res.Prior), Value: *c.Field(p), PriorSDLog: res.Fit.PriorSD[i]}
		if i < len(res.Fit.SD) {
			t.PosteriorSDLog = res.Fit.SD[i]
		}
		rep.Terms = append(rep.Terms, t)
	}
	var fit []TRTBenchRow
	var sims []TRTBenchSim
	for _, r := range res.Fit.Rows {
		rep.Fitted = append(rep.Fitted, trtbenchReportRow(r.Row, r.Sim))
		fit = append(fit, r.Row)
		sims = append(sims, r.Sim)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "profile %s (%s)\n\nTensorRT-LLM efficiency terms (fitted / prior):\n", p.Name, p.FitError)
	for _, t := range rep.Terms {
		fmt.Fprintf(&b, "  %-26s %12.5g / %-12.5g ×%.3f  posterior log-sd %.3f (prior %.3f)\n", t.Name, t.Value, t.Prior, t.Value/t.Prior, t.PosteriorSDLog, t.PriorSDLog)
	}
	fmt.Fprintf(&b, "\nfitted rows:\n%s", TRTBenchTable(fit, sims))
	if len(held) > 0 {
		preds, err := PredictTRTBench(res.Bench, held, p, nil, 0, 0)
		if err != nil {
			return nil, "", err
		}
		sims = sims[:0]
		for _, pr := range preds {
			rep.Predicted = append(rep.Predicted, trtbenchReportRow(pr.Row, pr.Sim))
			sims = append(sims, pr.Sim)
		}
		fmt.Fprintf(&b, "\npredicted rows (not fitted on):\n%s", TRTBenchTable(held, sims))
	}
	return rep, b.String(), nil
}
