package workload

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
)

// drain reads every job of a streamed workload.
func drain(t testing.TB, wl *sim.Workload) ([]sim.Job, error) {
	t.Helper()
	s, err := wl.Stream()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var jobs []sim.Job
	for {
		j, ok := s.Next()
		if !ok {
			return jobs, s.Err()
		}
		jobs = append(jobs, *j)
	}
}

// TestStreamEqualsPrepareRead: a streamed workload yields exactly the jobs
// that Prepare(Read(...)) holds, for both embedded traces under a range
// of filters (Repeat included), and can be opened again for another run.
func TestStreamEqualsPrepareRead(t *testing.T) {
	for _, name := range EmbeddedNames() {
		for _, f := range []Filter{
			{First: 1}, {First: 300}, {Skip: 60, First: 500, MaxISL: 16384, RateScale: 0.7365},
			{MaxISL: 4000, Skip: 7, First: 200}, {First: 50, Repeat: 3}, {Skip: 100, First: 10, RateScale: 4, Repeat: 2},
		} {
			for _, bs := range []int{16, 64} {
				tr, err := Read(name, f)
				if err != nil {
					t.Fatal(err)
				}
				want, err := Prepare(tr, bs)
				if err != nil {
					t.Fatal(err)
				}
				wl, err := Stream(name, f, bs)
				if err != nil {
					t.Fatalf("%s %+v: %v", name, f, err)
				}
				if wl.Len() != len(want.Jobs) || wl.Name != want.Name || wl.Span() != want.Span() {
					t.Fatalf("%s %+v: stream says %d jobs of %q over %d ns, Prepare has %d of %q over %d", name, f, wl.Len(), wl.Name, wl.Span(), len(want.Jobs), want.Name, want.Span())
				}
				for pass := 0; pass < 2; pass++ {
					got, err := drain(t, wl)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want.Jobs) {
						t.Fatalf("%s %+v block %d, pass %d: streamed jobs differ from Prepare(Read) (%d vs %d)", name, f, bs, pass, len(got), len(want.Jobs))
					}
				}
			}
		}
	}
}

// TestStreamRefusesBadInput: a streamed trace is checked whole before a
// run: a bad line past the first, a session, an empty selection and a
// rate that leaves the horizon fail with positioned errors.
func TestStreamRefusesBadInput(t *testing.T) {
	good := `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n"
	cases := []struct {
		name, body string
		f          Filter
		want       string
	}{
		{"bad line", strings.Repeat(good, 4) + "{not json\n", Filter{}, ":5:"},
		{"session", good + `{"timestamp": 1, "input_length": 10, "output_length": 2, "hash_ids": [1], "session_id": "a"}` + "\n", Filter{}, "session_id"},
		{"empty selection", good, Filter{Skip: 5}, "no requests left"},
		{"no requests", "\n\n", Filter{}, "no requests"},
		{"past the horizon", good + `{"timestamp": 1e11, "input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n", Filter{RateScale: 1e-6}, "rate_scale"},
		{"too many copies", good + strings.Replace(good, `"timestamp": 0`, `"timestamp": 1e9`, 1), Filter{Repeat: 10000}, "repeat"},
	}
	for _, c := range cases {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Stream(p, c.f, 16)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
	if _, err := Stream(filepath.Join(t.TempDir(), "missing.jsonl"), Filter{}, 16); err == nil {
		t.Error("a missing file streamed")
	}
	if _, err := Stream("conversation", Filter{}, 48); err == nil {
		t.Error("block size 48 accepted")
	}
}

// TestStreamReportsAFileThatChanged: a trace damaged after it was checked
// ends the stream with the reader's positioned error, not a panic.
func TestStreamReportsAFileThatChanged(t *testing.T) {
	good := `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n"
	p := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(p, []byte(strings.Repeat(good, 3)), 0o644)
	wl, err := Stream(p, Filter{}, 16)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte(good+"{broken\n"), 0o644)
	jobs, err := drain(t, wl)
	var ie *inputerr.Error
	if len(jobs) != 1 || err == nil || !strings.Contains(err.Error(), ":2:") || !asInputErr(err, &ie) {
		t.Errorf("%d jobs, error %v; want 1 job and a positioned error at line 2", len(jobs), err)
	}
	// A line moved past the horizon since the check.
	os.WriteFile(p, []byte(strings.Repeat(good, 3)), 0o644)
	if wl, err = Stream(p, Filter{}, 16); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte(good+strings.Replace(good, `"timestamp": 0`, `"timestamp": 1e12`, 1)), 0o644)
	jobs, err = drain(t, wl)
	if len(jobs) != 1 || err == nil || !strings.Contains(err.Error(), ":2: timestamp") {
		t.Errorf("%d jobs, error %v; want 1 job and a timestamp error at line 2", len(jobs), err)
	}
}

func asInputErr(err error, target **inputerr.Error) bool {
	e, ok := err.(*inputerr.Error)
	*target = e
	return ok
}
