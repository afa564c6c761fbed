package plots

import (
	"math"
	"strings"
	"testing"
)

// TestRequestPlotsRefuseInconsistentPoints: per-request arrays that do not
// line up (a TTFT list shorter than the arrivals, or none), or values that
// are not finite, make the figures that read them return an error naming
// the point, never panic.
func TestRequestPlotsRefuseInconsistentPoints(t *testing.T) {
	cases := map[string]func(ttft, arr []float64) ([]float64, []float64){
		"ttft_ms null":       func(ttft, arr []float64) ([]float64, []float64) { return nil, arr },
		"ttft_ms short":      func(ttft, arr []float64) ([]float64, []float64) { return ttft[:len(ttft)-1], arr },
		"arrival_s short":    func(ttft, arr []float64) ([]float64, []float64) { return ttft, arr[:3] },
		"arrival NaN":        func(ttft, arr []float64) ([]float64, []float64) { arr[5] = math.NaN(); return ttft, arr },
		"arrival +Inf":       func(ttft, arr []float64) ([]float64, []float64) { arr[len(arr)-1] = math.Inf(1); return ttft, arr },
		"ttft +Inf":          func(ttft, arr []float64) ([]float64, []float64) { ttft[2] = math.Inf(1); return ttft, arr },
		"arrivals unordered": nil, // fine: the decile span is their range
	}
	for name, change := range cases {
		rs, g := fixture()
		r := &rs[0]
		r.TTFTMs, r.ArrivalS = append([]float64(nil), r.TTFTMs...), append([]float64(nil), r.ArrivalS...)
		if change == nil {
			r.ArrivalS[0], r.ArrivalS[50] = r.ArrivalS[50], r.ArrivalS[0]
		} else {
			r.TTFTMs, r.ArrivalS = change(r.TTFTMs, r.ArrivalS)
		}
		_, errDec := TTFTByDecile(rs, g, r.Point.Policy, Meta{})
		_, errCDF := TTFTCDF(rs, g, r.Point.Policy, Meta{})
		if change == nil {
			if errDec != nil || errCDF != nil {
				t.Errorf("%s: %v, %v", name, errDec, errCDF)
			}
			continue
		}
		if errDec == nil || !strings.Contains(errDec.Error(), r.Point.Key()) {
			t.Errorf("%s: TTFTByDecile: %v; want an error naming point %s", name, errDec, r.Point.Key())
		}
		if name == "ttft +Inf" && (errCDF == nil || !strings.Contains(errCDF.Error(), r.Point.Key())) {
			t.Errorf("%s: TTFTCDF: %v; want an error naming point %s", name, errCDF, r.Point.Key())
		}
	}
}
