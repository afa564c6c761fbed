package sim

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/stat"
)

// Percentiles are the quantile levels AIPerf reports, with its key names.
var Percentiles = [...]struct {
	Key string
	P   float64
}{{"p1", 0.01}, {"p5", 0.05}, {"p10", 0.10}, {"p25", 0.25}, {"p50", 0.50}, {"p75", 0.75}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}}

// Dist summarises a sample as AIPerf's summary export does: count, mean,
// population standard deviation, min, max, sum and percentiles.
type Dist struct {
	Count int     `json:"count"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Std   float64 `json:"std"`
	Sum   float64 `json:"sum"`
	// P holds the values at Percentiles, in that order.
	P [len(Percentiles)]float64 `json:"-"`
}

// Pct returns the value at the named percentile ("p50"), NaN if unknown.
func (d Dist) Pct(key string) float64 {
	for i, p := range Percentiles {
		if p.Key == key {
			return d.P[i]
		}
	}
	return math.NaN()
}

// NewDist summarises x, sorting it in place. An empty sample gives a
// zero-count Dist whose statistics are NaN.
func NewDist(x []float64) Dist {
	d := Dist{Count: len(x)}
	if len(x) == 0 {
		d.Avg, d.Min, d.Max, d.Std = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		for i := range d.P {
			d.P[i] = math.NaN()
		}
		return d
	}
	sort.Float64s(x)
	d.Avg, d.Std = stat.PopMeanStdDev(x, nil)
	d.Min, d.Max = x[0], x[len(x)-1]
	for _, v := range x {
		d.Sum += v
	}
	for i, p := range Percentiles {
		d.P[i] = Quantile7(x, p.P)
	}
	return d
}

// Quantile7 is the p-quantile of sorted x by linear interpolation between
// closest ranks (Hyndman & Fan type 7), numpy's default and so AIPerf's.
// gonum's stat.Quantile offers types 1 and 4 only; comparing simulated with
// measured AIPerf percentiles needs the same estimator. A result that
// interpolates into +Inf (rejected requests counted as infinitely slow) is
// +Inf.
func Quantile7(x []float64, p float64) float64 {
	h := float64(len(x)-1) * p
	lo := int(math.Floor(h))
	frac := h - float64(lo)
	if lo+1 >= len(x) || frac == 0 {
		return x[lo]
	}
	if math.IsInf(x[lo+1], 1) {
		return math.Inf(1)
	}
	return x[lo] + frac*(x[lo+1]-x[lo])
}

// MarshalJSON writes the fields in AIPerf's order with percentile keys;
// NaN (an empty sample) is written as null.
func (d Dist) MarshalJSON() ([]byte, error) {
	b := []byte(`{"count":`)
	b = strconv.AppendInt(b, int64(d.Count), 10)
	num := func(key string, v float64) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = AppendJSONFloat(b, v)
	}
	num("avg", d.Avg)
	num("min", d.Min)
	num("max", d.Max)
	num("std", d.Std)
	num("sum", d.Sum)
	for i, p := range Percentiles {
		num(p.Key, d.P[i])
	}
	return append(b, '}'), nil
}

// AppendJSONFloat appends v as a JSON number, or null for NaN and ±Inf.
func AppendJSONFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// UnmarshalJSON reads what MarshalJSON writes (null → NaN).
func (d *Dist) UnmarshalJSON(b []byte) error {
	var m map[string]*float64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	get := func(k string) float64 {
		if v := m[k]; v != nil {
			return *v
		}
		return math.NaN()
	}
	*d = Dist{Avg: get("avg"), Min: get("min"), Max: get("max"), Std: get("std"), Sum: get("sum")}
	if c := m["count"]; c != nil {
		d.Count = int(*c)
	}
	for i, p := range Percentiles {
		d.P[i] = get(p.Key)
	}
	return nil
}
