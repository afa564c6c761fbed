package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"testing"

	"github.com/routesim/routesim/sim"
)

func records() ([]sim.Record, *sim.Summary) {
	recs := []sim.Record{
		{ID: 0, Line: 1, Arrival: 0, Routed: 1, QueueNs: -1, Worker: 0, FirstToken: 10 * sim.Millisecond, SecondToken: 15 * sim.Millisecond, End: 30 * sim.Millisecond, InputTokens: 100, OutputTokens: 5, Status: sim.StatusOK, HTTPCode: 200},
		{ID: 1, Line: 2, Arrival: 0, Routed: -1, QueueNs: -1, Worker: -1, FirstToken: -1, SecondToken: -1, End: 0, InputTokens: 90000, OutputTokens: 5, Status: sim.StatusRejectedTooLong, HTTPCode: 400, Reason: "too, \"long\""},
	}
	res := &sim.Result{Records: recs, Workers: []sim.WorkerStats{{BusyNs: 20 * sim.Millisecond, Steps: 5}}, Makespan: 30 * sim.Millisecond}
	s := sim.Summarize(res)
	return recs, &s
}

func TestRequestsCSVRoundTrips(t *testing.T) {
	recs, _ := records()
	var buf bytes.Buffer
	if err := WriteRequestsCSV(&buf, recs, false); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || len(rows[0]) != len(RequestColumns(false)) {
		t.Fatalf("%d rows of %d columns", len(rows), len(rows[0]))
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	if rows[1][col["ttft_ms"]] != "10" || rows[1][col["itl_ms"]] != "5" || rows[1][col["status"]] != "ok" {
		t.Errorf("row 1: %v", rows[1])
	}
	if rows[2][col["reason"]] != "too, \"long\"" || rows[2][col["ttft_ms"]] != "" || rows[2][col["http_code"]] != "400" {
		t.Errorf("row 2: %v", rows[2])
	}
}

func TestAIPerfExportCountsErrors(t *testing.T) {
	recs, s := records()
	var buf bytes.Buffer
	if err := WriteAIPerf(&buf, recs, s, AIPerfRun{Generator: "routesim test"}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		SchemaVersion     string                `json:"schema_version"`
		RequestCount      struct{ Avg float64 } `json:"request_count"`
		ErrorRequestCount struct{ Avg float64 } `json:"error_request_count"`
		TTFT              struct {
			Unit  string
			Count int
			P50   float64
		} `json:"time_to_first_token"`
		ErrorSummary []struct {
			ErrorDetails struct {
				Code    int
				Message string
			} `json:"error_details"`
			Count int
		} `json:"error_summary"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if out.SchemaVersion != AIPerfSchemaVersion || out.RequestCount.Avg != 1 || out.ErrorRequestCount.Avg != 1 {
		t.Errorf("counts: %+v", out)
	}
	if out.TTFT.Unit != "ms" || out.TTFT.Count != 1 || out.TTFT.P50 != 10 {
		t.Errorf("ttft: %+v", out.TTFT)
	}
	if len(out.ErrorSummary) != 1 || out.ErrorSummary[0].ErrorDetails.Code != 400 || out.ErrorSummary[0].Count != 1 {
		t.Errorf("error summary: %+v", out.ErrorSummary)
	}
}

func TestSummaryRowIsFlatAndComplete(t *testing.T) {
	_, s := records()
	cols, vals := SummaryRow(s)
	if len(cols) != len(vals) {
		t.Fatalf("%d columns, %d values", len(cols), len(vals))
	}
	got := map[string]string{}
	for i := range cols {
		if _, dup := got[cols[i]]; dup {
			t.Errorf("duplicate column %s", cols[i])
		}
		got[cols[i]] = vals[i]
	}
	for k, want := range map[string]string{"offered": "2", "completed": "1", "completeness": "0.5", "rejected_too_long": "1", "ttft_ms_p50": "10", "ttft_offered_ms_p99": ""} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
}

// TestRequestNulls: a value that does not exist is an empty field, never
// -1; a required column always has a value, whatever the outcome.
func TestRequestNulls(t *testing.T) {
	timeout := sim.Record{ID: 2, Arrival: 5, Routed: 5, Dispatched: 6, QueueNs: -1, Worker: 1, FirstToken: -1, SecondToken: -1, End: 900,
		InputTokens: 10, OutputTokens: 3, Status: sim.StatusFailedTimeout, Reason: "client gave up"}
	recs, _ := records()
	recs[1].Dispatched = -1 // as the simulator leaves a request refused up front
	recs = append(recs, timeout)
	var buf bytes.Buffer
	if err := WriteRequestsCSV(&buf, recs, true); err != nil { // every column
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	empty := map[int][]string{
		1: {"reason", "router_queue_ms"},
		2: {"routed_ns", "dispatched_ns", "worker", "first_token_ns", "second_token_ns", "ttft_ms", "itl_ms", "e2e_ms", "router_queue_ms"},
		3: {"line", "http_code", "first_token_ns", "second_token_ns", "ttft_ms", "itl_ms", "e2e_ms", "router_queue_ms"},
	}
	for r := 1; r < len(rows); r++ {
		want := map[string]bool{"rejected_attempts": true} // an empty list
		for _, c := range empty[r] {
			want[c] = true
		}
		for k, c := range RequestSchema {
			v := rows[r][k]
			if (v == "") != want[c.Name] {
				t.Errorf("record %d, %s = %q", r-1, c.Name, v)
			}
			if v == "-1" {
				t.Errorf("record %d, %s: a -1 marker", r-1, c.Name)
			}
			if v == "" && !c.Optional && c.Kind != ColString {
				t.Errorf("record %d: required column %s is empty", r-1, c.Name)
			}
		}
	}
}
