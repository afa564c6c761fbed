package explore

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routesim/routesim/scenario"
)

// testBuild is a stand-in for the command's Build (cmd/routesim tests the
// real one against routesim run): the small trace, with --n, --policy,
// --seed and --rate-scale read from args. It counts its calls.
func testBuild(calls *atomic.Int64) Build {
	return func(args []string) (*scenario.Built, *scenario.Spec, error) {
		calls.Add(1)
		s := scenario.Defaults()
		s.Trace = "../testdata/traces/arxiv_head60.jsonl"
		for i := 0; i+1 < len(args); i += 2 {
			v := args[i+1]
			var err error
			switch args[i] {
			case "--n":
				s.N, err = strconv.Atoi(v)
			case "--policy":
				s.Policy = v
			case "--seed":
				s.Seed, err = strconv.ParseUint(v, 10, 64)
			case "--rate-scale":
				s.RateScale, err = strconv.ParseFloat(v, 64)
			}
			if err != nil {
				return nil, nil, err
			}
		}
		b, err := s.Build(nil)
		return b, &s, err
	}
}

type streamed struct {
	events []event
	points int
}

func post(t *testing.T, url, body string) (*http.Response, *bufio.Scanner) {
	t.Helper()
	resp, err := http.Post(url+"/api/simulate", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	return resp, sc
}

func readAll(t *testing.T, sc *bufio.Scanner) streamed {
	t.Helper()
	var s streamed
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		s.events = append(s.events, e)
		if e.Type == "point" {
			s.points++
		}
	}
	return s
}

func newTestServer(t *testing.T, calls *atomic.Int64, workers int) *httptest.Server {
	srv, err := New(Options{Build: testBuild(calls), Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

func TestPointsAreCachedByTheirArguments(t *testing.T) {
	var calls atomic.Int64
	ts := newTestServer(t, &calls, 2)
	body := `{"flags":{"rate-scale":"2"},"n":2,"ns":"1..3","policies":["kv","round-robin"],"seed":1,"seeds":2}`
	_, sc := post(t, ts.URL, body)
	first := readAll(t, sc)
	if first.points != 12 {
		t.Fatalf("%d points, want 3 sizes × 2 policies × 2 seeds", first.points)
	}
	built := calls.Load()
	_, sc = post(t, ts.URL, body)
	again := readAll(t, sc)
	if again.points != 12 || calls.Load() != built {
		t.Errorf("the same view again: %d points, %d more builds (want 12, none)", again.points, calls.Load()-built)
	}
	for _, e := range again.events {
		if e.Type == "plan" && e.Cached != 12 {
			t.Errorf("plan says %d cached, want 12", e.Cached)
		}
		if e.Type == "point" && (e.Point.ElapsedMs != 0 || (e.Point.N == 2 && e.Point.Seed == 1) != (e.Point.Series != nil)) {
			t.Errorf("cached point %d/%s/%d: elapsed %g, series %v (only the detail views carry them)", e.Point.N, e.Point.Policy, e.Point.Seed, e.Point.ElapsedMs, e.Point.Series != nil)
		}
	}
	// A changed load re-simulates every point; a changed N none.
	_, sc = post(t, ts.URL, strings.Replace(body, `"n":2`, `"n":3`, 1))
	readAll(t, sc)
	if calls.Load() != built {
		t.Errorf("moving N within the curves rebuilt %d points", calls.Load()-built)
	}
}

func TestANewerRequestCancelsTheOlder(t *testing.T) {
	var calls atomic.Int64
	ts := newTestServer(t, &calls, 1)
	big := `{"client":"page","flags":{"rate-scale":"4"},"n":1,"ns":"1..64","policies":["kv","round-robin","least-loaded"],"seed":0,"seeds":8}`
	_, sc := post(t, ts.URL, big)
	if !sc.Scan() { // the first point: the request is running
		t.Fatal("no event")
	}
	_, sc2 := post(t, ts.URL, strings.Replace(big, `"seeds":8`, `"seeds":1`, 1))
	newer := readAll(t, sc2)
	older := readAll(t, sc)
	total := 64 * 3 * 8
	if older.points+1 >= total {
		t.Errorf("the superseded request ran all its %d points", total)
	}
	if newer.points != 64*3 {
		t.Errorf("the newer request gave %d points, want %d", newer.points, 64*3)
	}
	t.Logf("superseded after %d of %d points", older.points+1, total)
}

func TestRequestBounds(t *testing.T) {
	var calls atomic.Int64
	ts := newTestServer(t, &calls, 1)
	for _, c := range []struct{ body, want string }{
		{`{"n":2,"ns":"1..3","policies":["kv"],"seeds":33}`, "seeds 33 must be in [1, 32]"},
		{`{"n":2,"ns":"1..3","policies":[],"seeds":1}`, "choose at least one policy"},
		{`{"n":2,"ns":"1..3","policies":["kv","kv"],"seeds":1}`, "--policy kv is listed twice"},
		{`{"n":2,"ns":"1..100000","policies":["kv"],"seeds":1}`, "curves' N"},
		{`{"n":2,"ns":"1..256","policies":["kv","round-robin","least-loaded","random","power-of-two"],"seeds":2}`, "at most 2048 per view"},
		{`{"n":2,"ns":"2","policies":["kv"],"seeds":1,"knobs":{"no-such-knob":"1"}}`, "unknown policy parameter --no-such-knob"},
		{`{"n":2,"ns":"2","policies":["kv"],"seeds":1,"flags":{"model":"../x/config.json"}}`, "catalogue names only"},
		{`{"n":2,"ns":"2","policies":["kv"],"seeds":1,"extra":1}`, "unknown field"},
		{`{"n":2,"ns":"2","policies":["kv"],"seeds":1,"flags":{"gpu":"--scenario=/etc/passwd"}}`, "a value, not a flag"},
		{`{"n":2,"ns":"2","policies":["kv"],"seeds":1,"knobs":{"router-temperature":"--out"}}`, "a value, not a flag"},
		{`{"n":2,"ns":"2","policies":["kv"],"seeds":1,"seed":18446744073709551615}`, ""},
	} {
		resp, sc := post(t, ts.URL, c.body)
		var msg strings.Builder
		for sc.Scan() {
			msg.WriteString(sc.Text())
		}
		if c.want == "" {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: status %d %s", c.body, resp.StatusCode, msg.String())
			}
			continue
		}
		if got := msg.String(); resp.StatusCode != http.StatusBadRequest || !strings.Contains(got, c.want) {
			t.Errorf("%s: status %d %.300q, want 400 with %q", c.body, resp.StatusCode, got, c.want)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("refused requests built %d configurations", calls.Load()-1)
	}
}

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr     string
		explicit bool
		ok       bool
	}{
		{"127.0.0.1:8080", false, true},
		{"localhost:0", false, true},
		{"[::1]:8080", false, true},
		{"0.0.0.0:8080", false, false},
		{":8080", false, false},
		{"192.168.1.5:8080", false, false},
		{"0.0.0.0:8080", true, true},
		{"no-port", true, false},
	} {
		if err := CheckAddr(c.addr, c.explicit); (err == nil) != c.ok {
			t.Errorf("CheckAddr(%q, %v) = %v", c.addr, c.explicit, err)
		}
	}
}

func TestPageIsServed(t *testing.T) {
	var calls atomic.Int64
	ts := newTestServer(t, &calls, 1)
	for _, path := range []string{"/", "/app.js", "/render.js", "/charts.js", "/style.css", "/api/meta"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
}

// FuzzRequest: any body the page's API may receive is refused or planned
// without a panic, and a planned request's points stay within the bounds.
func FuzzRequest(f *testing.F) {
	f.Add(`{"flags":{"rate-scale":"2"},"n":2,"ns":"1..3","policies":["kv","round-robin"],"seed":1,"seeds":2}`)
	f.Add(`{"knobs":{"router-temperature":"0.5"},"n":4,"ns":"2,4,8","policies":["kv"],"seeds":1}`)
	f.Add(`{"flags":{"gpu":"a/b"},"n":0,"ns":"2..16:0","policies":[],"seeds":0}`)
	f.Fuzz(func(t *testing.T, body string) {
		var req Request
		dec := json.NewDecoder(strings.NewReader(body))
		dec.DisallowUnknownFields()
		if dec.Decode(&req) != nil {
			return
		}
		points, err := req.plan([]string{"--trace", "x"})
		if err != nil {
			return
		}
		if len(points) == 0 || len(points) > MaxPoints || !points[0].Detail {
			t.Fatalf("%d points, first detail %v", len(points), len(points) > 0 && points[0].Detail)
		}
		for _, p := range points {
			if p.Args[0] != "--trace" || len(p.Args)%2 != 0 {
				t.Fatalf("arguments %q", p.Args)
			}
			for i := 1; i < len(p.Args); i += 2 { // every value is a value
				if _, err := strconv.ParseFloat(p.Args[i], 64); strings.HasPrefix(p.Args[i], "-") && err != nil {
					t.Fatalf("value %q of %s reads as a flag", p.Args[i], p.Args[i-1])
				}
			}
		}
	})
}
