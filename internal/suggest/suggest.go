// Package suggest finds the known name a mistyped one was meant to be:
// the "did you mean" of flags, GPU, model and policy names.
package suggest

import "strings"

// Nearest returns the known name a mistyped name was most likely meant
// to be, ignoring case, '-', '_' and spaces, and whether it is close
// enough to suggest: the only known name that name (two letters or more)
// begins, else the nearest by edit distance if at most a third of the
// longer name's letters differ (at least one, at most four).
func Nearest(name string, known []string) (string, bool) {
	key := Squash(name)
	if key == "" {
		return "", false
	}
	var starts []string
	for _, k := range known {
		if len(key) >= 2 && strings.HasPrefix(Squash(k), key) {
			starts = append(starts, k)
		}
	}
	if len(starts) == 1 {
		return starts[0], true
	}
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := Distance(key, Squash(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return "", false
	}
	limit := min(4, max(1, max(len(key), len(Squash(best)))/3))
	return best, bestD <= limit
}

// Squash is a name for loose comparison: lower case, without '-', '_'
// and spaces.
func Squash(s string) string {
	return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s))
}

// Distance is the Levenshtein distance between a and b (in bytes).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
