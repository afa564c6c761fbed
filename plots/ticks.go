package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// linTicks labels round values — multiples of 1, 2, 2.5 or 5 × 10^k —
// inside [lo, hi], each label printed with exactly the decimals its step
// needs, so a label always names the value its tick sits at (gonum's
// default ticker can print "1" at 1.01). Integer axes step by at least 1;
// percent axes show 100·v with a % sign.
type linTicks struct {
	integer bool
	percent bool
}

// Ticks implements plot.Ticker.
func (t linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	scale := 1.0
	if t.percent {
		scale = 100
	}
	if flat(lo, hi) {
		// Equal values up to rounding: one tick, labelled exactly (steps
		// of a few ULPs would count past 2^53 and never end).
		label := strconv.FormatFloat(lo*scale, 'g', -1, 64)
		if t.percent {
			label += "%"
		}
		return []plot.Tick{{Value: lo, Label: label}}
	}
	step := niceStep((hi-lo)*scale/6, false)
	if t.integer {
		step = math.Max(1, niceStep((hi-lo)/8, true))
	}
	dec := decimals(step)
	minor := step / 5
	if m := step / math.Pow(10, math.Floor(math.Log10(step))); m == 2 || m == 2.5 && !t.integer {
		minor = step / 2
	}
	if t.integer && minor < 1 {
		minor = 0
	}
	var out []plot.Tick
	for k := math.Ceil(lo*scale/step - 1e-9); k*step <= hi*scale+step*1e-9; k++ {
		v := round(k*step, dec)
		if v == 0 { // −0 prints as "-0"
			v = 0
		}
		label := strconv.FormatFloat(v, 'f', dec, 64)
		if t.percent {
			label += "%"
		}
		out = append(out, plot.Tick{Value: v / scale, Label: label})
	}
	if minor > 0 {
		for k := math.Ceil(lo*scale/minor - 1e-9); k*minor <= hi*scale+minor*1e-9; k++ {
			if v := k * minor; math.Abs(v/step-math.Round(v/step)) > 1e-6 {
				out = append(out, plot.Tick{Value: v / scale})
			}
		}
	}
	return out
}

// flat says whether [lo, hi] is one value up to rounding: narrower than a
// billionth of its magnitude.
func flat(lo, hi float64) bool {
	return hi-lo <= 1e-9*math.Max(math.Abs(lo), math.Abs(hi))
}

// niceStep is the smallest of 1, 2, 2.5, 5 × 10^k at least raw (without
// 2.5 on integer axes).
func niceStep(raw float64, integer bool) float64 {
	if !(raw > 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	ms := []float64{1, 2, 2.5, 5, 10}
	if integer {
		ms = []float64{1, 2, 5, 10}
	}
	for _, m := range ms {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// decimals is how many decimals print step exactly (2.5 → 1, 0.02 → 2).
func decimals(step float64) int {
	for d := 0; d < 12; d++ {
		s := step * math.Pow(10, float64(d))
		if math.Abs(s-math.Round(s)) < 1e-6*s {
			return d
		}
	}
	return 12
}

func round(v float64, dec int) float64 {
	p := math.Pow(10, float64(dec))
	return math.Round(v*p) / p
}

// logTicks labels a log axis at 1, 2 and 5 × 10^k; where those leave
// part of the range unlabelled (a narrow range), at every integer
// multiple of the decade; failing that at round linear steps. A choice is
// kept when it labels at least three values and no gap between labels (or
// the ends) exceeds 40 % of the axis. With span (the axis' drawn length)
// set, it takes the densest of 1-2-5, 1-2-3-5, 1-2-3-4-5-6-8 and 1…9 whose
// labels stay apart on the page, so a range of 150–450 ms is labelled at
// 200, 300 and 400, not only at 200.
type logTicks struct {
	span vg.Length
	// gap is the least distance between labels' centres (0: labelSpacing,
	// for a vertical axis; a horizontal one needs a label's width).
	gap vg.Length
}

// labelSpacing is the least distance between two tick labels' centres.
const labelSpacing = vg.Length(17)

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 {
		lo = 1e-9
	}
	if !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	covers := func(ts []plot.Tick) bool {
		var at []float64
		for _, t := range ts {
			if t.Label != "" {
				at = append(at, math.Log(t.Value))
			}
		}
		if len(at) < 3 {
			return false
		}
		span, prev := math.Log(hi/lo), math.Log(lo)
		for _, a := range append(at, math.Log(hi)) {
			if a-prev > 0.4*span {
				return false
			}
			prev = a
		}
		return true
	}
	// apart says the labels are far enough apart on the page.
	apart := func(ts []plot.Tick) bool {
		if t.span <= 0 {
			return true
		}
		perLog := float64(t.span) / math.Log(hi/lo)
		prev := math.Inf(-1)
		for _, tk := range ts {
			if tk.Label == "" {
				continue
			}
			need := labelSpacing
			if t.gap > 0 {
				need = t.gap
			}
			if a := math.Log(tk.Value); (a-prev)*perLog < float64(need) {
				return false
			}
			prev = math.Log(tk.Value)
		}
		return true
	}
	at := func(ms []float64) []plot.Tick {
		var out []plot.Tick
		for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
			for m := 1.0; m <= 9; m++ {
				v := m * math.Pow(10, e)
				if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
					continue
				}
				tick := plot.Tick{Value: v}
				for _, lm := range ms {
					if m == lm {
						tick.Label = logLabel(v)
					}
				}
				out = append(out, tick)
			}
		}
		return out
	}
	if t.span > 0 {
		for _, ms := range [][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 5, 6, 8}, {1, 2, 3, 5}, {1, 2, 5}} {
			if out := at(ms); covers(out) && apart(out) {
				return out
			}
		}
	}
	for _, ms := range [][]float64{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		if out := at(ms); covers(out) {
			return out
		}
	}
	return linTicks{}.Ticks(lo, hi)
}

// logLabel prints a log-axis value plainly (0.5, 200, 10000), in
// exponent form only far from 1.
func logLabel(v float64) string {
	if v >= 1e-4 && v < 1e7 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// expTicks labels an axis that plots log10 of the values (figure.logY):
// logTicks' values, placed at their logarithms.
type expTicks struct{ span, gap vg.Length }

// Ticks implements plot.Ticker.
func (t expTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := logTicks{t.span, t.gap}.Ticks(math.Pow(10, lo), math.Pow(10, hi))
	for i := range ts {
		ts[i].Value = math.Log10(ts[i].Value)
	}
	return ts
}

// nines maps a completeness c to its plotted position on a nines axis,
// −log10(1 − c): 90 % → 1, 99 % → 2, 99.9 % → 3. Full completeness is
// drawn at −log10(floor), floor being half a request's share.
func nines(c, floor float64) float64 { return -math.Log10(math.Max(1-c, floor)) }

// ninesTicks labels a nines axis with completeness in percent: at
// 1 − m·10^−k for m = 5, 2, 1 (50 %, 80 %, 90 %, 95 %, 98 %, 99 %, …),
// only the m = 1 ones when the others would crowd, and 100 % where full
// completeness is drawn.
type ninesTicks struct{ floor float64 }

// Ticks implements plot.Ticker.
func (t ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	top := -math.Log10(t.floor)
	type cand struct {
		at, c float64
		dec   int
		major bool
	}
	var cs []cand
	for k := 0; k < 9; k++ {
		for _, m := range []float64{5, 2, 1} {
			c := 1 - m*math.Pow(10, -float64(k+1))
			at := -math.Log10(m) + float64(k+1)
			if at < lo-1e-9 || at > hi+1e-9 || at > top-0.15 {
				continue
			}
			cs = append(cs, cand{at, c, max(k-1, 0) + 1, m == 1})
		}
	}
	all := len(cs) <= 9
	var out []plot.Tick
	for _, c := range cs {
		tk := plot.Tick{Value: c.at}
		if all || c.major {
			tk.Label = strconv.FormatFloat(round(100*c.c, c.dec), 'f', -1, 64) + "%"
		}
		out = append(out, tk)
	}
	if top >= lo-1e-9 && top <= hi+1e-9 {
		out = append(out, plot.Tick{Value: top, Label: "100%"})
	}
	return out
}
