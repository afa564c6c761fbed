package model

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

// TestProfileRefusesHugeCoefficients: every coefficient is range-checked
// against its physical bound, not only for sign and finiteness; finite but
// huge values (1e19 ns steps, a 1e300 linear scale) used to pass and
// overflow to zero-time steps. The error names the file and the field.
func TestProfileRefusesHugeCoefficients(t *testing.T) {
	base := kernelProfileForTest(t)
	values := []float64{1e19, 1e300, math.MaxFloat64}
	for _, c := range Coefficients {
		for _, v := range append(values, c.Max*1.5) {
			p := *base
			*c.Field(&p) = v
			_, err := ReadProfile(strings.NewReader(profileJSON(t, &p)), "big.json")
			if err == nil {
				t.Errorf("%s = %g: accepted", c.Name, v)
				continue
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "big.json: ") || !strings.Contains(msg, c.Name+": ") || !strings.Contains(msg, "exceeds") {
				t.Errorf("%s = %g: error %q does not name the file and the field's bound", c.Name, v, msg)
			}
		}
	}
	for i, v := range []float64{1e12, 1e300} {
		p := *base
		curve := *p.LinearCurve
		curve.Ns = append([]float64(nil), curve.Ns...)
		curve.Ns[len(curve.Ns)-1-i] = v
		p.LinearCurve = &curve
		if _, err := ReadProfile(strings.NewReader(profileJSON(t, &p)), "big.json"); err == nil || !strings.Contains(err.Error(), "linear_curve: ns[") {
			t.Errorf("curve point %g: error %v, want one naming linear_curve.ns", v, err)
		}
	}
}

// TestCoefficientBoundsAreFarFromRealProfiles: every coefficient has a
// bound, and every shipped profile, and the profile of every catalogue
// deployment (a transfer, kernel prior or roofline estimate), lies an
// order of magnitude or more inside it (the bounds exclude mistakes, not
// slow hardware).
func TestCoefficientBoundsAreFarFromRealProfiles(t *testing.T) {
	for _, c := range Coefficients {
		if !(c.Max > 0) {
			t.Errorf("%s: no upper bound", c.Name)
		}
	}
	profiles := BuiltinProfiles()
	cat := DefaultCatalogue()
	for _, g := range cat.GPUs {
		for _, m := range cat.Models {
			profiles = append(profiles, ProfileFor(Deployment{GPU: g, Model: m, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, true))
		}
	}
	for _, p := range profiles {
		for _, c := range Coefficients {
			if v := *c.Field(p); v > c.Max/10 && c.Name != "noise_sigma" {
				t.Errorf("%s: %s = %g is within a factor of 10 of its bound %g", p.Name, c.Name, v, c.Max)
			}
		}
	}
}

// TestReadProfileIsBounded: a profile is read with the size limit of a
// settings file, failing with the file's name instead of reading forever.
func TestReadProfileIsBounded(t *testing.T) {
	r := io.MultiReader(strings.NewReader(strings.Repeat(" ", 64<<20)), strings.NewReader(profileJSON(t, kernelProfileForTest(t))))
	_, err := ReadProfile(r, "huge.json")
	if err == nil || !strings.HasPrefix(err.Error(), "huge.json: larger than 64 MiB") {
		msg := fmt.Sprint(err)
		t.Fatalf("error %.200q, want the size limit naming huge.json", msg)
	}
}

func kernelProfileForTest(t *testing.T) *Profile {
	t.Helper()
	for _, p := range BuiltinProfiles() {
		if p.IsKernel() {
			return p
		}
	}
	t.Fatal("no built-in kernel profile")
	return nil
}

func profileJSON(t *testing.T, p *Profile) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
