package model

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDrawsAreValidated: a posterior whose covariance is huge but positive
// definite draws coefficients such as a 1e23 ns step base; every draw is
// checked like a profile, against the same physical bounds, and the first
// that fails is reported before anything is simulated, naming the draw
// and the coefficient. A calibrated posterior's draws all pass.
func TestDrawsAreValidated(t *testing.T) {
	base := calibratedProfileForTest(t)
	d := deploymentForTest(t, base)
	if _, err := base.Posterior.Draws(base, d, 50, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatalf("the calibrated posterior's draws: %v", err)
	}
	wide := *base.Posterior
	wide.CovLog = make([][]float64, len(wide.Params))
	for i := range wide.CovLog {
		wide.CovLog[i] = make([]float64, len(wide.Params))
		wide.CovLog[i][i] = 1e4 // sd 100 in log units
	}
	p := *base
	p.Posterior = &wide
	if err := p.Validate(); err != nil {
		t.Fatalf("the wide posterior itself is valid: %v", err)
	}
	ds, err := wide.Draws(&p, d, 2, rand.New(rand.NewPCG(1, 2)))
	if err == nil {
		t.Fatalf("drew %d profiles from a posterior of sd 100 (step_base_ns %g, %g)", len(ds), ds[0].StepBaseNs, ds[1].StepBaseNs)
	}
	if msg := err.Error(); !strings.Contains(msg, "posterior draw 1 of 2") || !strings.Contains(msg, "exceeds") || !strings.Contains(msg, "sd up to 100") {
		t.Errorf("error %q should name the draw, the coefficient's bound and the posterior's width", msg)
	}
}

func calibratedProfileForTest(t *testing.T) *Profile {
	t.Helper()
	for _, p := range BuiltinProfiles() {
		if p.Posterior != nil && p.IsKernel() {
			return p
		}
	}
	t.Fatal("no built-in profile with a posterior")
	return nil
}

func deploymentForTest(t *testing.T, p *Profile) Deployment {
	t.Helper()
	cat := DefaultCatalogue()
	g, err := cat.GPU(p.GPU)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cat.Model(p.Model)
	if err != nil {
		t.Fatal(err)
	}
	return Deployment{GPU: g, Model: m, TP: p.TP, Quant: p.Quant, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
}
