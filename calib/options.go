package calib

import (
	"errors"
	"slices"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
)

// Bounds of the fit settings a spec's options and calibrate's flags set.
const (
	// MaxEvalsLimit bounds max_evals: each evaluation simulates every
	// arm, so 100,000 are days of fitting (the default is 1,500).
	MaxEvalsLimit = 100_000
	// MinModelError and MaxModelError bound model_error (log units): no
	// simulator matches a measurement to 0.1 %, and at 10 (a factor of
	// e¹⁰) the data pin nothing.
	MinModelError, MaxModelError = 1e-3, 10.0
	// MaxPriorWeight bounds prior_weight: at 1,000 the priors alone
	// decide.
	MaxPriorWeight = 1000
)

// CheckOptions checks fit settings as a fit will use them: max_evals in
// [1, MaxEvalsLimit], fit naming coefficients a calibration can fit, each
// once, prior_weight in [0, MaxPriorWeight] and model_error in
// [MinModelError, MaxModelError]. Problems are inputerr.FieldErrors naming
// the option (calibrate renders them as its flags).
func CheckOptions(maxEvals int, fit []string, priorWeight, modelError float64) error {
	return errors.Join(checkMaxEvals(maxEvals), checkFit(fit), checkPriorWeight(priorWeight), checkModelError(modelError))
}

// validate checks a spec's options; zero values (the defaults) pass.
func (o SpecOptions) validate() []error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, under("options.", err)...)
		}
	}
	if o.MaxEvals != 0 {
		add(checkMaxEvals(o.MaxEvals))
	}
	add(checkFit(o.Fit))
	if o.PriorWeight != nil {
		add(checkPriorWeight(*o.PriorWeight))
	}
	if o.ModelError != 0 {
		add(checkModelError(o.ModelError))
	}
	return errs
}

func checkMaxEvals(v int) error {
	if v < 1 || v > MaxEvalsLimit {
		return inputerr.Fieldf("max_evals", "%d must be in [1, %d]", v, MaxEvalsLimit)
	}
	return nil
}

func checkPriorWeight(v float64) error {
	if !(v >= 0 && v <= MaxPriorWeight) {
		return inputerr.Fieldf("prior_weight", "%g must be in [0, %d] (1 = the documented priors, 0 = none)", v, MaxPriorWeight)
	}
	return nil
}

func checkModelError(v float64) error {
	if !(v >= MinModelError && v <= MaxModelError) {
		return inputerr.Fieldf("model_error", "%g must be in [%g, %g] (log units: 0.1 ≈ 10 %%)", v, MinModelError, MaxModelError)
	}
	return nil
}

// checkFit refuses a name that is no fittable coefficient, and a name
// given twice.
func checkFit(names []string) error {
	known := FittableParams()
	var errs []error
	for i, n := range names {
		switch {
		case !slices.Contains(known, n):
			errs = append(errs, inputerr.Fieldf("fit", ": unknown coefficient %q (known: %s)", n, strings.Join(known, ", ")))
		case slices.Contains(names[:i], n):
			errs = append(errs, inputerr.Fieldf("fit", ": %q is listed twice", n))
		}
	}
	return errors.Join(errs...)
}

// FittableParams are the coefficients a calibration can fit, of either
// profile form (a fit refuses one its base profile lacks), sorted.
func FittableParams() []string {
	var out []string
	for _, c := range model.Coefficients {
		if c.Forms != 0 {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}
