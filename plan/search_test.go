package plan

import (
	"fmt"
	"testing"
)

func TestSearchFindsTheSmallestSizeWithinTheStepBound(t *testing.T) {
	ns := make([]int, 0, 40)
	for n := 1; n <= 40; n++ {
		ns = append(ns, n)
	}
	for _, c := range []struct{ threshold, want int }{{1, 1}, {2, 2}, {17, 17}, {39, 39}, {40, 40}, {41, 0}} {
		t.Run(fmt.Sprint(c.threshold), func(t *testing.T) {
			calls := map[int]int{}
			got, steps, err := Search(ns, 0.9, func(n int) (float64, error) {
				calls[n]++
				if n >= c.threshold {
					return 1, nil
				}
				return 0.5, nil
			})
			if err != nil || got != c.want {
				t.Fatalf("Search = %d, %v; want %d", got, err, c.want)
			}
			if len(steps) > MaxSteps(len(ns)) {
				t.Errorf("%d evaluations, bound %d", len(steps), MaxSteps(len(ns)))
			}
			for n, k := range calls {
				if k > 1 {
					t.Errorf("size %d evaluated %d times", n, k)
				}
			}
			if got > 1 {
				below := false
				for _, s := range steps {
					below = below || (s.N == got-1 && !s.Met)
				}
				if !below {
					t.Errorf("the size below the answer (%d) was not evaluated as failing: %+v", got-1, steps)
				}
			}
		})
	}
}

func TestMaxSteps(t *testing.T) {
	for _, c := range [][2]int{{1, 2}, {2, 3}, {15, 6}, {16, 6}, {17, 7}} {
		if got := MaxSteps(c[0]); got != c[1] {
			t.Errorf("MaxSteps(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}

// Scan finds the smallest passing size even where more workers do worse.
func TestScanHandlesNonMonotoneAttainment(t *testing.T) {
	ns := []int{2, 3, 4, 5, 6, 7, 8}
	pass := map[int]bool{5: true, 6: true, 7: true} // fails again at 8
	f := func(n int) (float64, error) {
		if pass[n] {
			return 1, nil
		}
		return 0, nil
	}
	if got, _, _ := Search(ns, 0.9, f); got != 0 {
		t.Fatalf("Search = %d: it checks the largest size first and should report none", got)
	}
	got, steps, err := Scan(ns, 0.9, f)
	if err != nil || got != 5 || len(steps) != len(ns) {
		t.Fatalf("Scan = %d, %d steps, %v; want 5 after all %d sizes", got, len(steps), err, len(ns))
	}
}
