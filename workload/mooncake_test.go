package workload

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
)

const good = `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]}
{"timestamp": 10.5, "input_length": 512, "output_length": 1, "hash_ids": [0]}

{"timestamp": 20, "input_length": 1, "output_length": 2, "hash_ids": [7], "session_id": "ignored"}
`

func TestReadMooncake(t *testing.T) {
	tr, err := ReadMooncake(strings.NewReader(good), "good.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Requests) != 3 {
		t.Fatalf("%d requests", len(tr.Requests))
	}
	r := tr.Requests[1]
	if r.Line != 2 || r.ArrivalNs != 10_500_000 || r.InputTokens != 512 || r.OutputTokens != 1 || len(r.HashIDs) != 1 {
		t.Errorf("request 2: %+v", r)
	}
	if tr.Requests[2].Line != 4 {
		t.Errorf("blank lines must still count: line %d", tr.Requests[2].Line)
	}
}

func TestReadMooncakeErrorsArePositioned(t *testing.T) {
	ok := `{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [0]}` + "\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"malformed", ok + `{"timestamp": 0, "input_length": 10,` + "\n", "t.jsonl:2: malformed JSON"},
		{"not an object", ok + "[1,2]\n", "t.jsonl:2: a request must be a JSON object, not array"},
		{"missing field", ok + `{"timestamp": 1, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:2: input_length: missing"},
		{"missing hash ids", `{"timestamp": 1, "input_length": 10, "output_length": 5}`, "t.jsonl:1: hash_ids: missing"},
		{"float length", `{"timestamp": 1, "input_length": 10.5, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:1: input_length: number 10.5 is not a valid int64"},
		{"string field", `{"timestamp": "x", "input_length": 10, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:1: timestamp: string is not a valid float64"},
		{"negative input", `{"timestamp": 1, "input_length": -4, "output_length": 5, "hash_ids": []}`, "t.jsonl:1: input_length: -4 must be in [1, 10000000]"},
		{"zero output", `{"timestamp": 1, "input_length": 4, "output_length": 0, "hash_ids": [0]}`, "t.jsonl:1: output_length: 0 must be in"},
		{"absurd input", `{"timestamp": 1, "input_length": 99999999999, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:1: input_length: 99999999999 must be in"},
		{"negative time", `{"timestamp": -1, "input_length": 4, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:1: timestamp: -1 ms must be ≥ 0"},
		{"absurd time", `{"timestamp": 1e15, "input_length": 4, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:1: timestamp: 1e+15 ms is absurd"},
		{"hash count", `{"timestamp": 1, "input_length": 513, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:1: hash_ids: has 1 ids, want ceil(input_length/512) = 2"},
		{"negative hash", `{"timestamp": 1, "input_length": 5, "output_length": 5, "hash_ids": [-3]}`, "t.jsonl:1: hash_ids: id -3 at index 0"},
		{"decreasing time", `{"timestamp": 5, "input_length": 4, "output_length": 5, "hash_ids": [0]}` + "\n" + ok, "t.jsonl:2: timestamp: 0 ms is earlier than the previous line's 5 ms"},
		{"bad session", `{"session_id": [1], "timestamp": 1, "input_length": 5, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:1: session_id: [1] must be a non-empty string or a number"},
		{"negative delay", `{"session_id": "a", "delay": -5, "timestamp": 1, "input_length": 5, "output_length": 5, "hash_ids": [0]}`, "t.jsonl:1: delay: -5 ms must be in"},
		{"empty", "", "t.jsonl: trace has no requests"},
		{"blank only", "\n \n", "t.jsonl: trace has no requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadMooncake(strings.NewReader(tc.in), "t.jsonl")
			if err == nil {
				t.Fatalf("accepted %q", tc.in)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			var pe *inputerr.Error
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *inputerr.Error", err)
			}
		})
	}
}

func TestOpenTruncatedGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := 0; i < 200; i++ {
		zw.Write([]byte(`{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [0]}` + "\n"))
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "cut.jsonl.gz")
	if err := os.WriteFile(path, buf.Bytes()[:buf.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("truncated gzip: %v", err)
	}
}

func TestOpenMissingFileNamesEmbeddedTraces(t *testing.T) {
	_, err := Open("no/such/trace.jsonl")
	if err == nil || !strings.Contains(err.Error(), "conversation") {
		t.Fatalf("error %v should list the embedded traces", err)
	}
}

func TestEmbeddedTraces(t *testing.T) {
	for name, want := range map[string]int{"conversation": 12031, "arxiv-window": 1609} {
		tr, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Requests) != want {
			t.Errorf("%s: %d requests, want %d (data/SOURCE.md)", name, len(tr.Requests), want)
		}
	}
}

func TestFilter(t *testing.T) {
	tr := &Trace{Name: "f"}
	for i, isl := range []int{100, 20000, 200, 300, 400} {
		tr.Requests = append(tr.Requests, Request{Line: i + 1, ArrivalNs: int64(1000 * (i + 1)), InputTokens: isl, OutputTokens: 1})
	}
	for _, tc := range []struct {
		name  string
		f     Filter
		lines []int
		times []int64
	}{
		{"all", Filter{}, []int{1, 2, 3, 4, 5}, []int64{0, 1000, 2000, 3000, 4000}},
		{"max-isl", Filter{MaxISL: 16384}, []int{1, 3, 4, 5}, []int64{0, 2000, 3000, 4000}},
		{"skip+first after max-isl", Filter{MaxISL: 16384, Skip: 1, First: 2}, []int{3, 4}, []int64{0, 1000}},
		{"rate x2", Filter{First: 3, RateScale: 2}, []int{1, 2, 3}, []int64{0, 500, 1000}},
		{"rate x0.5", Filter{First: 2, RateScale: 0.5}, []int{1, 2}, []int64{0, 2000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tr.Apply(tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Requests) != len(tc.lines) {
				t.Fatalf("%d requests, want %d", len(out.Requests), len(tc.lines))
			}
			for i, r := range out.Requests {
				if r.Line != tc.lines[i] || r.ArrivalNs != tc.times[i] {
					t.Errorf("request %d: line %d at %d, want line %d at %d", i, r.Line, r.ArrivalNs, tc.lines[i], tc.times[i])
				}
			}
		})
	}
	for _, f := range []Filter{{Skip: -1}, {First: -2}, {MaxISL: -1}, {RateScale: -1}, {Skip: 5}} {
		if _, err := tr.Apply(f); err == nil {
			t.Errorf("filter %+v accepted", f)
		}
	}
}
