package workload

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/routesim/routesim/internal/inputerr"
)

func gen(t *testing.T, s Synthetic, seed uint64) *Trace {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s.Generate(rand.New(rand.NewPCG(seed, 1)))
}

func TestSyntheticRatesAndLengths(t *testing.T) {
	for _, arrival := range []string{"poisson", "gamma"} {
		tr := gen(t, Synthetic{Requests: 20000, RatePerS: 5, Arrival: arrival, ArrivalCV: 2, ISLMean: 3000, OSLMean: 100}, 1)
		var gaps, isl []float64
		for i, r := range tr.Requests {
			if i > 0 {
				gaps = append(gaps, float64(r.ArrivalNs-tr.Requests[i-1].ArrivalNs)/1e9)
			}
			isl = append(isl, float64(r.InputTokens))
			if len(r.HashIDs) != (r.InputTokens+511)/512 {
				t.Fatalf("request %d: %d ids for %d tokens", i, len(r.HashIDs), r.InputTokens)
			}
		}
		m, sd := stat.MeanStdDev(gaps, nil)
		wantCV := 1.0
		if arrival == "gamma" {
			wantCV = 2
		}
		if math.Abs(m-0.2)/0.2 > 0.05 || math.Abs(sd/m-wantCV)/wantCV > 0.1 {
			t.Errorf("%s: mean gap %.3f s (want 0.2), CV %.2f (want %g)", arrival, m, sd/m, wantCV)
		}
		if mi := stat.Mean(isl, nil); math.Abs(mi-3000)/3000 > 0.03 {
			t.Errorf("%s: mean ISL %.0f, want 3000", arrival, mi)
		}
	}
}

func TestSyntheticPrefixGroupsAndDeterminism(t *testing.T) {
	s := Synthetic{Requests: 200, RatePerS: 1, PrefixGroups: 3, PrefixTokens: 1100}
	a, b := gen(t, s, 7), gen(t, s, 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different traces")
	}
	groups := map[[2]int64]int{}
	for _, r := range a.Requests {
		if r.InputTokens <= 1100 {
			t.Fatalf("request without its prefix: %d tokens", r.InputTokens)
		}
		groups[[2]int64{r.HashIDs[0], r.HashIDs[1]}]++ // 1,100 tokens: two whole shared blocks
		if r.HashIDs[2] < 1<<40 {
			t.Fatalf("the block mixing prefix and own tokens must be unique: %d", r.HashIDs[2])
		}
	}
	if len(groups) != 3 {
		t.Errorf("%d distinct prefixes, want 3", len(groups))
	}
	for _, bad := range []Synthetic{{}, {Requests: 1}, {Requests: 1, RatePerS: 1, Arrival: "uniform"}, {Requests: 1, RatePerS: 1, PrefixGroups: 2}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestSyntheticNegativePrefixNamed: a negative prefix setting is refused
// under its own field with what is wrong, not as "set both or neither".
func TestSyntheticNegativePrefixNamed(t *testing.T) {
	for _, tc := range []struct {
		field          string
		groups, tokens int
	}{{"synthetic.prefix_groups", -1, 0}, {"synthetic.prefix_groups", -1, 100}, {"synthetic.prefix_tokens", 2, -1}, {"synthetic.prefix_groups", 2, 0}} {
		s := Synthetic{Requests: 10, RatePerS: 1, PrefixGroups: tc.groups, PrefixTokens: tc.tokens}
		var fe *inputerr.FieldError
		err := s.Validate()
		if !errors.As(err, &fe) || fe.Field != tc.field || (tc.groups < 0 || tc.tokens < 0) != strings.Contains(err.Error(), "must be ≥ 0") {
			t.Errorf("groups %d, tokens %d: %v, want an error naming %s", tc.groups, tc.tokens, err, tc.field)
		}
	}
}
