package sim

import (
	"math"
	"math/rand/v2"
	"sort"
)

// BandKeys are the summary statistics an uncertainty band is reported for,
// with the names summary.json uses (distribution.statistic).
var BandKeys = []string{"ttft_ms.p50", "ttft_ms.avg", "ttft_ms.p90", "ttft_offered_ms.p50", "itl_ms.avg", "e2e_ms.avg",
	"completeness", "rejected_share", "requests_per_s", "gpu_util_mean"}

// BandValue reads one BandKeys statistic from a summary (NaN if undefined,
// e.g. TTFT over offered requests where rejections reach the quantile).
func BandValue(s *Summary, key string) float64 {
	switch key {
	case "ttft_ms.p50":
		return s.TTFTMs.Pct("p50")
	case "ttft_ms.avg":
		return s.TTFTMs.Avg
	case "ttft_ms.p90":
		return s.TTFTMs.Pct("p90")
	case "ttft_offered_ms.p50":
		if p := s.TTFTOfferedMs["p50"]; p != nil {
			return *p
		}
		return math.Inf(1)
	case "itl_ms.avg":
		return s.ITLMs.Avg
	case "e2e_ms.avg":
		return s.E2EMs.Avg
	case "completeness":
		return s.Completeness
	case "rejected_share":
		if s.Offered == 0 {
			return math.NaN()
		}
		n := 0
		for _, v := range s.Rejected {
			n += v
		}
		return float64(n) / float64(s.Offered)
	case "requests_per_s":
		return s.RequestsPerS
	case "gpu_util_mean":
		return s.GPU.UtilMean
	}
	return math.NaN()
}

// Bands are the 10th–90th percentile range of summary statistics over
// runs whose step-time coefficients were drawn from a profile's posterior
// (the same seed for every draw: common random numbers).
type Bands struct {
	Draws  int    `json:"draws"`
	Method string `json:"method"`
	// ModelError is the log sd of the model error added to latency and
	// throughput draws (0 = coefficient uncertainty only).
	ModelError float64 `json:"model_error_log"`
	// Bands maps a BandKeys name to [p10, p90]; an undefined end (the
	// statistic was undefined in that share of draws) is null.
	Bands map[string][2]*float64 `json:"bands"`
	// Estimate says what the point estimate beside the bands (the
	// summary's own statistics) is: the run at which coefficients.
	Estimate string `json:"estimate,omitempty"`
	// Outside lists the BandKeys whose estimate lies outside its band;
	// WhyOutside says how that can be.
	Outside    []string `json:"estimate_outside_band,omitempty"`
	WhyOutside string   `json:"why_outside,omitempty"`
}

// WhyOutside is why a point estimate can lie outside its own band.
const WhyOutside = "the band is the 10th-90th percentile of each statistic over the draws' runs; the estimate is one run at the central coefficients, not a draw and not the draws' median. " +
	"A statistic that bends with the coefficients (queueing delay grows faster than linearly near saturation; completeness stops at 100 %) takes a value at the centre away from its median over draws, " +
	"draws below a coefficient's physical floor are raised to it, latency draws also carry the model error (model_error_log), and with few draws the band's ends are themselves uncertain"

// Place records what the point estimate is (estimate: which coefficients
// its run used) and which of point's statistics lie outside their band
// (an undefined statistic or band end is left out).
func (b *Bands) Place(estimate string, point *Summary) {
	b.Estimate, b.WhyOutside, b.Outside = estimate, WhyOutside, nil
	for _, k := range BandKeys {
		v, band := BandValue(point, k), b.Bands[k]
		if math.IsNaN(v) || math.IsInf(v, 0) || band[0] == nil || band[1] == nil {
			continue
		}
		if v < *band[0] || v > *band[1] {
			b.Outside = append(b.Outside, k)
		}
	}
}

// BandLo and BandHi are the percentiles a band spans.
const (
	BandLo = 0.10
	BandHi = 0.90
)

// NewBands computes the bands of the given draws' summaries. With
// modelErr > 0, each draw's latency statistics are also
// multiplied by exp(modelErr·z), z standard normal from rng: the posterior
// predictive adds the error the model makes even at its true coefficients.
func NewBands(method string, draws []Summary, modelErr float64, rng *rand.Rand) *Bands {
	b := &Bands{Draws: len(draws), Method: method, ModelError: modelErr, Bands: map[string][2]*float64{}}
	for _, k := range BandKeys {
		xs := make([]float64, 0, len(draws))
		for i := range draws {
			v := BandValue(&draws[i], k)
			if modelErr > 0 && rng != nil && HasModelError(k) {
				v *= math.Exp(modelErr * rng.NormFloat64())
			}
			xs = append(xs, v)
		}
		b.Bands[k] = [2]*float64{bandQuantile(xs, BandLo), bandQuantile(xs, BandHi)}
	}
	return b
}

// HasModelError says whether a band statistic carries the model's own
// error in a posterior-predictive band: latencies do; throughput (bounded
// by the arrival rate where the cluster keeps up) and the shares of
// requests served or refused are left to the coefficients.
func HasModelError(key string) bool {
	switch key {
	case "completeness", "rejected_share", "gpu_util_mean", "requests_per_s":
		return false
	}
	return true
}

// bandQuantile is the type-7 quantile with undefined values (NaN, +Inf)
// ranked above every number; nil if the quantile lands on one.
func bandQuantile(xs []float64, p float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := append([]float64(nil), xs...)
	for i, v := range s {
		if math.IsNaN(v) {
			s[i] = math.Inf(1)
		}
	}
	sort.Float64s(s)
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	v := s[lo]
	if frac := h - float64(lo); frac > 0 {
		v += frac * (s[lo+1] - s[lo])
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}
