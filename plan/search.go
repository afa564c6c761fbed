package plan

import (
	"fmt"
	"math"
	"math/bits"
)

// Step is one evaluated cluster size: the share of runs (seeds × draws)
// that met the SLO, and whether that share reached the confidence.
type Step struct {
	N          int     `json:"n"`
	Attainment float64 `json:"attainment"`
	Met        bool    `json:"met"`
}

// MaxSteps is the most sizes Search evaluates over candidates sizes:
// ⌈log₂ candidates⌉ + 2.
func MaxSteps(candidates int) int {
	if candidates <= 1 {
		return candidates + 1
	}
	return bits.Len(uint(candidates-1)) + 2
}

// Search returns the smallest of the increasing sizes ns whose
// attainment reaches confidence (0 if even the largest does not), and
// the sizes it evaluated, in order. It assumes attainment does not fall
// as N grows: it evaluates the largest size, then bisects; the size just
// below the answer is always among those evaluated (and failing), unless
// the answer is the smallest candidate.
func Search(ns []int, confidence float64, attainment func(n int) (float64, error)) (int, []Step, error) {
	if len(ns) == 0 {
		return 0, nil, fmt.Errorf("plan: no cluster size to search")
	}
	var steps []Step
	met := map[int]bool{}
	eval := func(i int) (bool, error) {
		if ok, done := met[i]; done {
			return ok, nil
		}
		a, err := attainment(ns[i])
		if err != nil {
			return false, err
		}
		ok := a >= confidence-1e-12 && !math.IsNaN(a)
		met[i] = ok
		steps = append(steps, Step{N: ns[i], Attainment: a, Met: ok})
		return ok, nil
	}
	hi := len(ns) - 1
	ok, err := eval(hi)
	if err != nil || !ok {
		return 0, steps, err
	}
	lo := 0
	for lo < hi {
		mid := (lo + hi) / 2
		ok, err := eval(mid)
		if err != nil {
			return 0, steps, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo > 0 {
		// Verification: the size below must have been evaluated and failed.
		if _, err := eval(lo - 1); err != nil {
			return 0, steps, err
		}
	}
	return ns[lo], steps, nil
}

// Scan evaluates every size, smallest first, and returns the smallest whose
// attainment reaches confidence (0 if none): the answer without the
// monotonicity assumption, at the cost of the whole range.
func Scan(ns []int, confidence float64, attainment func(n int) (float64, error)) (int, []Step, error) {
	if len(ns) == 0 {
		return 0, nil, fmt.Errorf("plan: no cluster size to search")
	}
	minN := 0
	steps := make([]Step, 0, len(ns))
	for _, n := range ns {
		a, err := attainment(n)
		if err != nil {
			return 0, steps, err
		}
		ok := a >= confidence-1e-12 && !math.IsNaN(a)
		steps = append(steps, Step{N: n, Attainment: a, Met: ok})
		if ok && minN == 0 {
			minN = n
		}
	}
	return minN, steps, nil
}
