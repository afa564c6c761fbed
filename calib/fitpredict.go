package calib

import "fmt"

// Prediction settings of a fit with held-out runs: validate's defaults.
const (
	// PredictDraws are the coefficient draws of the held-out runs' bands.
	PredictDraws = 20
	// PredictSeeds are the seeds the point prediction averages.
	PredictSeeds = 3
)

// FitPredictReport is the report of a fit with held-out runs: the fit's,
// and every held-out statistic against its prediction.
type FitPredictReport struct {
	Fit       *Report   `json:"fit"`
	Predicted []PredRow `json:"predicted"`
}

// FitPredict fits spec's runs (Fit) and predicts rest's (nil or none:
// nothing held out) with the fitted profile, bands over PredictDraws
// coefficient draws when it has a posterior. It returns the fit, the
// report (the fit's Report, or a FitPredictReport with held-out runs)
// and its text.
func FitPredict(spec, rest *Spec, opts Options) (*Result, any, string, error) {
	res, err := Fit(spec, opts)
	if err != nil {
		return nil, nil, "", err
	}
	text := res.Report.String()
	if rest == nil || len(rest.Runs) == 0 {
		return res, res.Report, text, nil
	}
	draws := PredictDraws
	if res.Profile.Posterior == nil {
		draws = 0
	}
	rows, err := Predict(rest, res.Profile, res.Profile.Posterior, draws, PredictSeeds, 0)
	if err != nil {
		return nil, nil, "", err
	}
	text += fmt.Sprintf("\npredicted points (not fitted on; band: 10–90 %% over %d coefficient draws):\n%s", draws, PredictionTable(rows))
	return res, FitPredictReport{Fit: res.Report, Predicted: rows}, text, nil
}
