package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/routesim/routesim/internal/atomicfile"
	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/internal/sealed"
	"github.com/routesim/routesim/sim"
)

// A point file is sealed (its content carries its SHA-256, see package
// internal/sealed) and checked for sense on every read: a sweep resumed,
// merged or replotted uses a finished point only if it is what routesim
// wrote and holds together.

// MaxPointFile bounds a point file: with --per-request it holds every
// request's record.
const MaxPointFile = inputerr.MaxDataFile

// EncodePoint is a point file's content.
func EncodePoint(r *Result) ([]byte, error) { return sealed.Marshal(r) }

// ReadPoint decodes a point file's content and checks it: its digest, the
// members every point has, and that its numbers hold together. Errors name
// file and the offending field.
func ReadPoint(data []byte, file string) (*Result, error) {
	var r Result
	if err := sealed.Unmarshal(data, file, &r); err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, inputerr.Errorf(file, 0, "", "%v", err)
	}
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, inputerr.Errorf(file, 0, field, format, a...))
	}
	for _, k := range []string{"key", "manifest_digest", "point", "summary", "arrival_s", "ttft_ms"} {
		if v, ok := members[k]; !ok || string(v) == "null" {
			bad(k, "missing: every point file has it (not a point file, or damaged)")
		}
	}
	if len(errs) == 0 {
		r.check(bad)
	}
	if len(errs) > maxProblems {
		errs = append(errs[:maxProblems], fmt.Errorf("%s: and %d more problems", file, len(errs)-maxProblems))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &r, nil
}

// maxProblems is how many problems of one file an error lists.
const maxProblems = 5

// check reports every way r fails to hold together.
func (r *Result) check(bad func(field, format string, a ...any)) {
	if r.Key != r.Point.Key() {
		bad("key", "%q is not the key of its point %+v", r.Key, r.Point)
	}
	s := &r.Summary
	checkSummary(s, "summary", bad)
	if len(r.ArrivalS) != s.Offered {
		bad("arrival_s", "%d values for %d offered requests", len(r.ArrivalS), s.Offered)
	}
	if len(r.TTFTMs) != s.Offered {
		bad("ttft_ms", "%d values for %d offered requests", len(r.TTFTMs), s.Offered)
	}
	for i, a := range r.ArrivalS {
		if !(a >= 0) || math.IsInf(a, 0) {
			bad(fmt.Sprintf("arrival_s[%d]", i), "%g is not a time ≥ 0", a)
			break
		}
	}
	var done []float64
	for i, t := range r.TTFTMs {
		if t != -1 && !(t >= 0) || math.IsInf(t, 0) {
			bad(fmt.Sprintf("ttft_ms[%d]", i), "%g is neither a TTFT ≥ 0 nor -1 (not completed)", t)
			return
		}
		if t >= 0 {
			done = append(done, t)
		}
	}
	if len(done) != s.Completed {
		bad("ttft_ms", "%d completed requests, summary.completed says %d", len(done), s.Completed)
	} else if d := sim.NewDist(done); !sameDist(d, s.TTFTMs) {
		bad("summary.ttft_ms", "does not match the point's ttft_ms values (p50 %g in the summary, %g from ttft_ms)", s.TTFTMs.Pct("p50"), d.Pct("p50"))
	}
	if r.Records != nil && len(r.Records) != s.Offered {
		bad("records", "%d records for %d offered requests", len(r.Records), s.Offered)
	}
	for i := range r.Draws {
		checkSummary(&r.Draws[i], fmt.Sprintf("draws[%d]", i), bad)
	}
	if r.DrawEvals != nil && len(r.DrawEvals) != len(r.Draws) {
		bad("draw_evals", "%d evaluations for %d draws", len(r.DrawEvals), len(r.Draws))
	}
}

// checkSummary checks a run's summary: counts that add up, and every
// number finite and ≥ 0 (a distribution's only where it has values).
func checkSummary(s *sim.Summary, at string, bad func(field, format string, a ...any)) {
	if s.Rejected == nil || s.TTFTOfferedMs == nil {
		bad(at, "missing or incomplete (no rejected counts or offered-TTFT quantiles)")
		return
	}
	rejected := 0
	for _, k := range sortedKeys(s.Rejected) {
		rejected += s.Rejected[k]
	}
	if s.Completed < 0 || s.Completed > s.Offered || s.Completed+rejected != s.Offered {
		bad(at+".offered", "%d offered is not %d completed + %d rejected", s.Offered, s.Completed, rejected)
	}
	want := 0.0
	if s.Offered > 0 {
		want = float64(s.Completed) / float64(s.Offered)
	}
	if s.Completeness != want {
		bad(at+".completeness", "%g is not completed/offered = %g", s.Completeness, want)
	}
	for _, c := range []struct {
		name  string
		d     sim.Dist
		count int
	}{{"ttft_ms", s.TTFTMs, s.Completed}, {"e2e_ms", s.E2EMs, s.Completed}, {"isl", s.ISL, s.Offered}, {"osl", s.OSL, s.Completed}, {"router_queue_ms", s.RouterQueueMs, s.Parked}} {
		if c.d.Count != c.count {
			bad(at+"."+c.name+".count", "%d values, not %d", c.d.Count, c.count)
		}
	}
	nonNegative(reflect.ValueOf(s).Elem(), at, bad)
}

var distType = reflect.TypeOf(sim.Dist{})

// nonNegative reports any number in v (a summary or part of one) that is
// negative, or not finite where a value is expected; a distribution's
// statistics only when it has values.
func nonNegative(v reflect.Value, at string, bad func(field, format string, a ...any)) {
	switch v.Kind() {
	case reflect.Float64:
		if f := v.Float(); !(f >= 0) || math.IsInf(f, 0) {
			bad(at, "%g: want a finite number ≥ 0", f)
		}
	case reflect.Int:
		if v.Int() < 0 {
			bad(at, "%d: want a count ≥ 0", v.Int())
		}
	case reflect.Pointer:
		if !v.IsNil() {
			nonNegative(v.Elem(), at, bad)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			nonNegative(v.Index(i), fmt.Sprintf("%s[%d]", at, i), bad)
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			nonNegative(v.MapIndex(k), at+"."+k.String(), bad)
		}
	case reflect.Struct:
		if v.Type() == distType {
			d := v.Interface().(sim.Dist)
			if d.Count < 0 {
				bad(at+".count", "%d: want a count ≥ 0", d.Count)
			}
			if d.Count <= 0 {
				return
			}
			for _, f := range []struct {
				k string
				v float64
			}{{"avg", d.Avg}, {"min", d.Min}, {"max", d.Max}, {"std", d.Std}, {"sum", d.Sum}} {
				nonNegative(reflect.ValueOf(f.v), at+"."+f.k, bad)
			}
			for i, p := range sim.Percentiles {
				nonNegative(reflect.ValueOf(d.P[i]), at+"."+p.Key, bad)
			}
			return
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "-" || !t.Field(i).IsExported() {
				continue
			}
			if name == "" {
				name = t.Field(i).Name
			}
			nonNegative(v.Field(i), at+"."+name, bad)
		}
	}
}

// sameDist compares two distributions bit for bit (NaN equal to NaN).
func sameDist(a, b sim.Dist) bool {
	same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	if a.Count != b.Count || !same(a.Avg, b.Avg) || !same(a.Min, b.Min) || !same(a.Max, b.Max) || !same(a.Std, b.Std) || !same(a.Sum, b.Sum) {
		return false
	}
	for i := range a.P {
		if !same(a.P[i], b.P[i]) {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ReadPointFile reads and checks one point file (ReadPoint), at most
// MaxPointFile bytes.
func ReadPointFile(path string) (*Result, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, err := inputerr.ReadAll(f, path, MaxPointFile)
	if err != nil {
		return nil, nil, err
	}
	r, err := ReadPoint(b, path)
	return r, b, err
}

// readPoint reads one point file and checks that it is point p of the
// sweep with this digest.
func readPoint(path string, p Point, digest string) (*Result, error) {
	r, _, err := ReadPointFile(path)
	if err != nil {
		return nil, err
	}
	if err := r.Belongs(path, p, digest); err != nil {
		return nil, err
	}
	return r, nil
}

// Belongs checks that r, read from path, is point p of the sweep whose
// manifest digest is digest.
func (r *Result) Belongs(path string, p Point, digest string) error {
	switch {
	case r.Key != p.Key():
		return fmt.Errorf("%s: holds point %q, not %q (copied or renamed?)", path, r.Key, p.Key())
	case r.ManifestDigest != digest:
		return fmt.Errorf("%s: belongs to another sweep (manifest digest %.12s, this sweep's %.12s)", path, r.ManifestDigest, digest)
	case r.Point != p:
		return fmt.Errorf("%s: its point %+v is not %+v", path, r.Point, p)
	}
	return nil
}

// writePoint publishes a finished point's file atomically.
func writePoint(path string, r *Result) error {
	b, err := EncodePoint(r)
	if err != nil {
		return fmt.Errorf("point %s: %w", r.Key, err)
	}
	return atomicfile.WriteFile(path, func(w io.Writer) error { _, err := w.Write(b); return err })
}
