package calib

import (
	"errors"
	"math"
	"sort"
	"strings"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
)

// PredRow compares one statistic of one arm with its prediction: the
// point estimate (the profile itself, averaged over seeds when it has
// noise) and the 10–90 % band over coefficient draws from post.
type PredRow struct {
	Arm       string   `json:"arm"`
	Stat      string   `json:"stat"`
	Measured  float64  `json:"measured"`
	Predicted float64  `json:"predicted"`
	BandLo    *float64 `json:"band_lo"`
	BandHi    *float64 `json:"band_hi"`
	// Ratio is predicted / measured; ErrPct the same as a percentage error.
	Ratio  float64 `json:"ratio"`
	ErrPct float64 `json:"error_pct"`
	InBand bool    `json:"in_band"`
}

// Predict simulates the spec's runs with profile p — runs it was not
// fitted on — and, with draws > 0, with that many coefficient sets drawn
// from post (stream "uncertainty" of seed; common random numbers: every
// draw replays seed's workload and noise). It returns every measured
// statistic with its prediction and band. (Sequential, like the rest of
// calib: callers parallelise across specs.)
func Predict(spec *Spec, p *model.Profile, post *model.Posterior, draws, seeds int, seed uint64) ([]PredRow, error) {
	arms, err := loadArms(spec, p)
	if err != nil {
		return nil, err
	}
	f := &fitter{arms: arms, base: p}
	seeds = max(seeds, 1)
	if p.NoiseSigma == 0 {
		seeds = 1
	}
	profiles := []*model.Profile{p}
	if draws > 0 {
		if post == nil {
			return nil, errors.New("calib: predicting with bands needs a posterior")
		}
		ds, err := post.Draws(p, arms[0].built.Deploy, draws, sim.Stream(seed, "uncertainty"))
		if err != nil {
			return nil, err
		}
		profiles = append(profiles, ds...)
	}
	// stats[i][a]: profile i's statistics for arm a (the point estimate is
	// the mean over seeds; a draw runs seed alone).
	stats := make([][]Stats, len(profiles))
	for i, q := range profiles {
		n := 1
		if i == 0 {
			n = seeds
		}
		per := make([][]Stats, len(arms))
		for s := range n {
			st, _, err := f.simulate(q, seed+uint64(s))
			if err != nil {
				return nil, err
			}
			for a := range arms {
				per[a] = append(per[a], st[a])
			}
		}
		for a := range arms {
			m, _ := meanStats(per[a])
			stats[i] = append(stats[i], m)
		}
	}
	// The posterior predictive: each draw's latency statistics also carry
	// the model's own error (log sd post.ModelErrorLog), drawn in a fixed
	// order; throughput and utilisation keep the coefficients' spread.
	if len(profiles) > 1 && post.ModelErrorLog > 0 {
		rng := sim.Stream(seed, "model-error")
		for _, st := range stats[1:] {
			for a := range arms {
				for _, k := range statOrder {
					if v, ok := st[a][k]; ok && strings.Contains(k, "_ms_") {
						st[a][k] = v * math.Exp(post.ModelErrorLog*rng.NormFloat64())
					}
				}
			}
		}
	}
	var rows []PredRow
	for a, ar := range arms {
		for _, k := range statOrder {
			m, ok := ar.measured[k]
			s, ok2 := stats[0][a][k]
			if !ok || !ok2 || m <= 0 {
				continue
			}
			row := PredRow{Arm: ar.name, Stat: k, Measured: m, Predicted: s, Ratio: s / m, ErrPct: 100 * (s - m) / m}
			if len(profiles) > 1 {
				var xs []float64
				for _, st := range stats[1:] {
					if v, ok := st[a][k]; ok {
						xs = append(xs, v)
					}
				}
				if len(xs) > 0 {
					sort.Float64s(xs)
					lo, hi := sim.Quantile7(xs, sim.BandLo), sim.Quantile7(xs, sim.BandHi)
					row.BandLo, row.BandHi = &lo, &hi
					row.InBand = m >= lo && m <= hi
				}
			}
			if math.IsNaN(row.Ratio) {
				continue
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}
