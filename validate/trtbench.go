package validate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/routesim/routesim/calib"
	"github.com/routesim/routesim/model"
)

// TRTBenchCase is a case on NVIDIA's published trtllm-bench throughput
// (calib.ReadTRTBench): fit the TensorRT-LLM efficiency terms of one
// deployment on some of its ISL/OSL rows, predict its other rows, and
// predict every row of each Transfer deployment with the fit carried to
// it (model.Transfer: flagged as transferred).
type TRTBenchCase struct {
	// Rows is the table file, relative to the case.
	Rows string `json:"rows"`
	// GPU, Model and TP select the fitted deployment's rows.
	GPU   string `json:"gpu"`
	Model string `json:"model"`
	TP    int    `json:"tp"`
	// FitRows are the ISL/OSL ("128/2048") fitted on.
	FitRows []string `json:"fit_rows"`
	// Transfer are other deployments (same model) whose rows the fit
	// predicts, transferred.
	Transfer []calib.TRTBenchSelect `json:"transfer,omitempty"`
	// Iters bounds the fit's Levenberg–Marquardt iterations (default 20).
	Iters int `json:"iters,omitempty"`
}

// statOutputTokS is the statistic of a trtllm-bench row.
const statOutputTokS = "output_tok_s"

func runTRTBenchCase(c Case, dir string, opt Options) (*Result, error) {
	tc := c.TRTBench
	f, err := os.Open(filepath.Join(dir, tc.Rows))
	if err != nil {
		return nil, err
	}
	all, err := calib.ReadTRTBench(f, tc.Rows)
	f.Close()
	if err != nil {
		return nil, err
	}
	cat := model.DefaultCatalogue()
	mine, dep, err := calib.TRTBenchSelect{GPU: tc.GPU, Model: tc.Model, TP: tc.TP}.Select(all, cat)
	if err != nil {
		return nil, err
	}
	fitRows, held, err := calib.SplitTRTBench(mine, tc.FitRows)
	if err != nil {
		return nil, err
	}
	opt.say("%s: fitting the TensorRT-LLM efficiency terms on %d trtllm-bench rows", c.Name, len(fitRows))
	res, err := calib.CalibrateTRTBench(fitRows, dep, tc.Iters)
	if err != nil {
		return nil, err
	}
	p := res.Profile
	out := &Result{Case: c, Profile: p.Name, Posterior: p.Posterior.Method}
	for i, name := range res.Fit.Params {
		c := mustCoef(name)
		post, prior := 100*math.Expm1(res.Fit.SD[i]), 100*math.Expm1(res.Fit.PriorSD[i])
		out.Coefs = append(out.Coefs, calib.Coef{Name: name, Fitted: true, Start: *c.Field(res.Prior), Value: *c.Field(p),
			Floor: model.Floor(dep, p, name), PriorSDPct: &prior, PosteriorSDPct: &post,
			Identified: res.Fit.SD[i] <= model.IdentifiedSD, Narrowed: res.Fit.SD[i] < model.NarrowedShare*res.Fit.PriorSD[i]})
		out.Terms = append(out.Terms, fmt.Sprintf("%s ×%.3f of the TensorRT-LLM prior (%.4g), posterior ±%.0f %% (prior ±%.0f %%)",
			name, *c.Field(p) / *c.Field(res.Prior), *c.Field(p), post, prior))
	}
	for _, r := range res.Fit.Rows {
		out.FitNotes = append(out.FitNotes, fmt.Sprintf("fitted %s %s: measured %.0f, simulated %.0f tok/s (%+.1f %%)",
			label(dep), r.Row.Arm(), r.Row.TokensPerS, r.Sim.TokensPerS, calib.PctErr(r.Sim.TokensPerS, r.Row.TokensPerS)))
	}
	opt.say("%s: predicting %d held-out rows (%d coefficient draws)", c.Name, len(held), opt.Draws)
	preds, err := calib.PredictTRTBench(res.Bench, held, p, p.Posterior, opt.Draws, 0)
	if err != nil {
		return nil, err
	}
	out.Rows = append(out.Rows, predRows(label(dep), preds)...)
	out.Summary = append(out.Summary, entry(c, dep, model.EngineTRTLLM, fmt.Sprintf("fitted on %d other rows of this deployment", len(fitRows)), out.Rows))
	for _, t := range tc.Transfer {
		rows, to, err := t.Select(all, cat)
		if err != nil {
			return nil, err
		}
		q, err := model.Transfer(p, dep, to, false)
		if err != nil {
			return nil, err
		}
		// The transfer's band: the fitted efficiency terms' posterior,
		// carried as ratios onto the target's prior.
		post := *p.Posterior
		post.MeanLog = nil
		for _, name := range post.Params {
			post.MeanLog = append(post.MeanLog, math.Log(*mustCoef(name).Field(q)))
		}
		opt.say("%s: predicting %d rows of %s, transferred", c.Name, len(rows), label(to))
		preds, err := calib.PredictTRTBench(&calib.TRTBench{Deploy: to, Seed: res.Bench.Seed}, rows, q, &post, opt.Draws, 0)
		if err != nil {
			return nil, err
		}
		tr := predRows(label(to)+" (transferred)", preds)
		out.Rows = append(out.Rows, tr...)
		out.Summary = append(out.Summary, entry(c, to, model.EngineTRTLLM, "transferred from the fit on "+label(dep)+", nothing fitted on this deployment", tr))
	}
	out.Checks = accept(c, out.Rows)
	out.Pass = true
	for _, ch := range out.Checks {
		out.Pass = out.Pass && ch.Pass
	}
	return out, nil
}

func label(d model.Deployment) string { return fmt.Sprintf("%s TP%d", d.GPU.Name, d.TP) }

func predRows(prefix string, preds []calib.TRTBenchPrediction) []calib.PredRow {
	var out []calib.PredRow
	for _, pr := range preds {
		m, s := pr.Row.TokensPerS, pr.Sim.TokensPerS
		row := calib.PredRow{Arm: prefix + " " + pr.Row.Arm(), Stat: statOutputTokS, Measured: m, Predicted: s, Ratio: s / m, ErrPct: calib.PctErr(s, m)}
		if pr.BandHi > 0 {
			lo, hi := pr.BandLo, pr.BandHi
			row.BandLo, row.BandHi, row.InBand = &lo, &hi, m >= lo && m <= hi
		}
		out = append(out, row)
	}
	return out
}

func mustCoef(name string) model.Coefficient {
	c, ok := model.CoefficientByName(name)
	if !ok {
		panic("validate: unknown coefficient " + name)
	}
	return c
}
