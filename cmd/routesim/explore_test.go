package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/explore"
)

// exploreServer serves the explorer on the default base, as routesim
// explore does.
func exploreServer(t *testing.T) *httptest.Server {
	t.Helper()
	opt, err := exploreOptions("")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := explore.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

type explorePoint struct {
	N       int             `json:"n"`
	Policy  string          `json:"policy"`
	Summary json.RawMessage `json:"summary"`
	Command string          `json:"command"`
}

// exploreSimulate posts body and returns the status, the error text (for
// a refusal) and the points streamed.
func exploreSimulate(t *testing.T, ts *httptest.Server, body string) (int, string, []explorePoint) {
	t.Helper()
	resp, err := http.Post(ts.URL+"/api/simulate", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String(), nil
	}
	var pts []explorePoint
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev struct {
			Type  string        `json:"type"`
			Point *explorePoint `json:"point"`
			Error string        `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stream line %q: %v", sc.Text(), err)
		}
		switch ev.Type {
		case "point":
			pts = append(pts, *ev.Point)
		case "error":
			t.Errorf("stream error: %s", ev.Error)
		}
	}
	return resp.StatusCode, "", pts
}

func TestExploreSummaryIsRuns(t *testing.T) {
	ts := exploreServer(t)
	body := `{"flags":{"rate-scale":"0.9","dynamo-version":"1.4.0"},"knobs":{"router-temperature":"0.2"},"n":3,"ns":"3","policies":["kv","least-loaded"],"seed":4,"seeds":1}`
	code, msg, pts := exploreSimulate(t, ts, body)
	if code != http.StatusOK || len(pts) != 2 {
		t.Fatalf("status %d %s, %d points", code, msg, len(pts))
	}
	for _, p := range pts {
		args := append(append([]string{}, exploreWindow()...), "--rate-scale", "0.9", "--dynamo-version", "1.4.0")
		if p.Policy == "kv" { // the knob goes only to the policy that reads it
			args = append(args, "--router-temperature", "0.2")
		}
		args = append(args, "--n", "3", "--policy", p.Policy, "--seed", "4")
		if want := "routesim run " + strings.Join(args, " "); p.Command != want {
			t.Errorf("command %q, want %q", p.Command, want)
		}
		out := filepath.Join(t.TempDir(), "out")
		if _, _, err := runCLI(append([]string{"run", "--out", out}, args...)...); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.Summary, compact.Bytes()) {
			t.Errorf("%s: the page's summary differs from routesim run's summary.json:\n%s\n%s", p.Policy, p.Summary, compact.Bytes())
		}
	}
}

func TestExploreRefusesWithRunsWords(t *testing.T) {
	ts := exploreServer(t)
	for _, c := range []struct {
		name, flags, knobs string
		run                []string // the run flags that give the same error
	}{
		{"unknown Dynamo release", `{"rate-scale":"1","dynamo-version":"9.9.9"}`, `{}`, []string{"--rate-scale", "1", "--dynamo-version", "9.9.9"}},
		{"negative rate scale", `{"rate-scale":"-2"}`, `{}`, []string{"--rate-scale", "-2"}},
		{"rate scale not a number", `{"rate-scale":"fast"}`, `{}`, []string{"--rate-scale", "fast"}},
		{"knob out of range", `{"rate-scale":"1"}`, `{"router-temperature":"-1"}`, []string{"--rate-scale", "1", "--router-temperature", "-1"}},
		{"unknown GPU", `{"rate-scale":"1","gpu":"B300-imaginary"}`, `{}`, []string{"--rate-scale", "1", "--gpu", "B300-imaginary"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"flags":` + c.flags + `,"knobs":` + c.knobs + `,"n":4,"ns":"4","policies":["kv"],"seed":0,"seeds":1}`
			code, msg, _ := exploreSimulate(t, ts, body)
			args := append(append(append([]string{"run"}, exploreWindow()...), c.run...), "--n", "4", "--policy", "kv", "--seed", "0")
			_, _, err := runCLI(args...)
			if err == nil {
				t.Fatalf("routesim %s succeeded", strings.Join(args, " "))
			}
			if code != http.StatusBadRequest || strings.TrimSpace(msg) != err.Error() {
				t.Errorf("status %d, page error\n  %q\nrun's\n  %q", code, strings.TrimSpace(msg), err.Error())
			}
		})
	}
}

func TestExploreRefusesFilesAndOversizedBodies(t *testing.T) {
	ts := exploreServer(t)
	code, msg, _ := exploreSimulate(t, ts, `{"flags":{"gpu":"/etc/passwd.json"},"n":4,"ns":"4","policies":["kv"],"seeds":1}`)
	if code != http.StatusBadRequest || !strings.Contains(msg, "catalogue names only") {
		t.Errorf("a GPU file: status %d %q", code, msg)
	}
	code, msg, _ = exploreSimulate(t, ts, `{"flags":{"trace":"/etc/passwd"},"n":4,"ns":"4","policies":["kv"],"seeds":1}`)
	if code != http.StatusBadRequest || !strings.Contains(msg, `unknown setting "trace"`) {
		t.Errorf("a trace file: status %d %q", code, msg)
	}
	big := `{"client":"` + strings.Repeat("x", explore.MaxBody) + `"}`
	if code, msg, _ = exploreSimulate(t, ts, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte body: status %d %q", len(big), code, msg)
	}
}

func TestExploreBindsLoopbackByDefault(t *testing.T) {
	if err := explore.CheckAddr(exploreAddr, false); err != nil {
		t.Errorf("the default --addr %s: %v", exploreAddr, err)
	}
	for _, addr := range []string{"0.0.0.0:8080", "[::]:8080", "192.168.1.2:0", ":8080"} {
		if err := explore.CheckAddr(addr, false); err == nil {
			t.Errorf("%s accepted without an explicit --addr", addr)
		}
	}
}

// TestWindowDefaultsSpellTheirValues: each window default's value, given
// as its flag to routesim run, sets the spec as its set function does, so
// the explorer's command lines (exploreWindow) replay sweep's window.
func TestWindowDefaultsSpellTheirValues(t *testing.T) {
	for _, d := range windowDefaults {
		t.Run(d.flag, func(t *testing.T) {
			_, fromFlag, err := exploreBuild([]string{"--trace", "arxiv-window", "--" + d.flag, d.value})
			if err != nil {
				t.Fatal(err)
			}
			_, fromSet, err := exploreBuild([]string{"--trace", "arxiv-window"})
			if err != nil {
				t.Fatal(err)
			}
			d.set(fromSet)
			if fromFlag.MaxISL != fromSet.MaxISL || fromFlag.Skip != fromSet.Skip || fromFlag.First != fromSet.First ||
				fromFlag.RateScale != fromSet.RateScale || fromFlag.MaxModelLen != fromSet.MaxModelLen {
				t.Errorf("--%s %s gives max-isl %d skip %d first %d rate-scale %g max-model-len %d; its set function %d %d %d %g %d",
					d.flag, d.value, fromFlag.MaxISL, fromFlag.Skip, fromFlag.First, fromFlag.RateScale, fromFlag.MaxModelLen,
					fromSet.MaxISL, fromSet.Skip, fromSet.First, fromSet.RateScale, fromSet.MaxModelLen)
			}
		})
	}
}
