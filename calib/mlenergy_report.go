package calib

import (
	"fmt"
	"math"
)

// MLEnergyReport is the report of an ML.ENERGY fit (calibrate's
// report.json): the profile, the fitted prompt length, the posterior
// log-sds, every row measured against simulated and, with a
// leave-one-out, every row against its prediction by a fit to the others.
type MLEnergyReport struct {
	Profile      string              `json:"profile"`
	ISLMean      float64             `json:"isl_mean"`
	PosteriorSD  map[string]float64  `json:"posterior_log_sd"`
	FrontendFrom string              `json:"frontend_from"`
	Rows         []MLEnergyReportRow `json:"rows"`
	LeaveOneOut  []MLEnergyReportRow `json:"leave_one_out,omitempty"`
	Simulations  int                 `json:"simulations"`
}

// MLEnergyReportRow is one row measured, simulated and their % errors.
type MLEnergyReportRow struct {
	MaxNumSeqs int                `json:"max_num_seqs"`
	Measured   SteadyState        `json:"measured"`
	Simulated  SteadyState        `json:"simulated"`
	ErrPct     map[string]float64 `json:"error_pct"`
}

func mlenergyReportRow(r MLEnergyRow, s SteadyState) MLEnergyReportRow {
	return MLEnergyReportRow{MaxNumSeqs: r.MaxNumSeqs,
		Measured:  SteadyState{MedianITLMs: r.MedianITLMs, TokensPerS: r.TokensPerS, AvgBatch: r.AvgBatch, PowerW: r.PowerW},
		Simulated: s,
		ErrPct: map[string]float64{"median_itl_ms": PctErr(s.MedianITLMs, r.MedianITLMs), "output_tokens_per_s": PctErr(s.TokensPerS, r.TokensPerS),
			"power_w": PctErr(s.PowerW, r.PowerW), "avg_batch": PctErr(s.AvgBatch, r.AvgBatch)}}
}

// Report is the fit's report and its text (calibrate's report.txt): the
// profile, the prompt length, every row's table and, when loo holds the
// leave-one-out folds (LeaveOneOutFold of every row, in row order), their
// table.
func (r *MLEnergyResult) Report(loo []MLEnergyLOO) (*MLEnergyReport, string) {
	fit := r.Fit
	rep := &MLEnergyReport{Profile: r.Profile.Name, ISLMean: fit.ISLMean, PosteriorSD: map[string]float64{},
		FrontendFrom: r.FrontendFrom, Simulations: fit.Sims}
	for i, name := range append(append([]string(nil), MLEnergyParams...), ISLPrior.Name) {
		if i < len(fit.SD) {
			rep.PosteriorSD[name] = fit.SD[i]
		}
	}
	var fitted, pred []SteadyState
	for _, row := range fit.Rows {
		rep.Rows = append(rep.Rows, mlenergyReportRow(row.Row, row.Sim))
		fitted = append(fitted, row.Sim)
	}
	islKind := "nuisance"
	if r.Bench.ISLKnown {
		islKind = "given"
	}
	text := fmt.Sprintf("profile %s (%s)\nprompt mean length (%s) %.0f tokens\n\nfit, every row:\n%s",
		r.Profile.Name, r.Profile.FitError, islKind, fit.ISLMean, MLEnergyTable(r.Rows, fitted))
	if loo == nil {
		return rep, text
	}
	worst := 0.0
	for i, l := range loo {
		rep.LeaveOneOut = append(rep.LeaveOneOut, mlenergyReportRow(l.Row, l.Pred))
		pred = append(pred, l.Pred)
		for _, e := range rep.LeaveOneOut[i].ErrPct {
			worst = math.Max(worst, math.Abs(e))
		}
	}
	text += fmt.Sprintf("\nleave-one-out, each row predicted by a fit to the others (max |error| %.1f%% over ITL, throughput, power and batch):\n%s",
		worst, MLEnergyTable(r.Rows, pred))
	return rep, text
}
