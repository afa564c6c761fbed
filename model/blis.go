package model

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// BLISFit is one entry of BLIS's blackbox coefficient table
// (inference-sim's defaults.yaml): per engine step β0 + β1·prefill tokens
// + β2·decode tokens µs, per request α0 + α1·ISL µs of queueing, and α2
// µs per output token of post-processing off the step path.
type BLISFit struct {
	ID       string     `json:"id"`
	GPU      string     `json:"GPU"`
	TP       int        `json:"tensor_parallelism"`
	VLLM     string     `json:"vllm_version"`
	Alpha    [3]float64 `json:"alpha_coeffs"`
	Beta     [3]float64 `json:"beta_coeffs"`
	BestLoss float64    `json:"best_loss"`
	// RoutesimGPU and RoutesimModel name the catalogue's deployment the
	// fit stands for; Note adds what a reader should know about the match.
	RoutesimGPU   string `json:"routesim_gpu"`
	RoutesimModel string `json:"routesim_model"`
	Note          string `json:"note,omitempty"`
}

// BLISFits is the copied table: its source and the fits.
type BLISFits struct {
	Source  string    `json:"source"`
	Commit  string    `json:"commit"`
	License string    `json:"license"`
	Fits    []BLISFit `json:"fits"`
}

// ReadBLISFits reads a BLISFits file (model/data/blis/fits.json).
func ReadBLISFits(path string) (*BLISFits, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	b, err := inputerr.ReadAll(fh, path, inputerr.MaxSmallFile)
	fh.Close()
	if err != nil {
		return nil, err
	}
	var f BLISFits
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// BLISProfile is the linear profile a BLIS fit gives (a shipped *.blis
// profile): c0 = β0, c1 = β1, c3 = β2, frontend = α0 + α1·ISL, in ns,
// constants rounded to 1 ns and per-token slopes to 0.1 ns; α2 is not
// modelled; power is the catalogue's idle and TDP.
func BLISProfile(f BLISFit, source string, cat *Catalogue) (*Profile, error) {
	gpu, err := cat.GPU(f.RoutesimGPU)
	if err != nil {
		return nil, err
	}
	llm, err := cat.Model(f.RoutesimModel)
	if err != nil {
		return nil, err
	}
	ns := func(us float64) float64 { return math.Round(us * 1000) }
	slope := func(us float64) float64 { return math.Round(us*10000) / 10 }
	note := "BLIS blackbox fit: StepTime = beta0 + beta1*prefill tokens + beta2*decode tokens (us); QueueingTime alpha0 + alpha1*ISL is the frontend delay here; alpha2 (per-output-token post-processing, off the step path) is not modelled. Power fields are the catalogue's idle and TDP, not measured."
	if f.Note != "" {
		note = f.Note + " " + note
	}
	p := &Profile{
		Name:  fmt.Sprintf("%s.%s.tp%d.blis", strings.ToLower(gpu.Name), strings.ToLower(llm.Name), f.TP),
		GPU:   gpu.Name,
		Model: llm.Name,
		TP:    f.TP,
		Quant: BF16,
		Kind:  "measured",
		Source: fmt.Sprintf("%s (Apache-2.0): %s, %s, TP %d, %s; beta = %.3f, %.3f, %.3f us; alpha = %.3f, %.3f, %.3f us",
			source, f.ID, f.GPU, f.TP, f.VLLM, f.Beta[0], f.Beta[1], f.Beta[2], f.Alpha[0], f.Alpha[1], f.Alpha[2]),
		Note:                    note,
		StepBaseNs:              ns(f.Beta[0]),
		PrefillNsPerToken:       slope(f.Beta[1]),
		DecodeNsPerSeq:          slope(f.Beta[2]),
		FrontendNs:              ns(f.Alpha[0]),
		FrontendNsPerInputToken: slope(f.Alpha[1]),
		PowerIdleW:              gpu.IdleWatts,
		PowerBusyW:              gpu.TDPWatts,
		FitError:                fmt.Sprintf("BLIS best_loss %.1f (its own loss units, over its training runs)", f.BestLoss),
	}
	return p, p.Validate()
}
