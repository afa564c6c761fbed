package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	gojson "github.com/goccy/go-json"

	"github.com/routesim/routesim/internal/inputerr"
)

// MooncakeBlockTokens is the number of prompt tokens one Mooncake hash id
// stands for.
const MooncakeBlockTokens = 512

// Limits beyond which a trace value is rejected as absurd.
const (
	MaxInputTokens  = 10_000_000
	MaxOutputTokens = 1_000_000
	maxTimestampMs  = 1e12 // about 31 years
	maxLineBytes    = 64 << 20
)

// MaxTraceBytes bounds what routesim reads of one trace, counted after
// decompression (a gzip bomb expands a thousandfold): 16 GiB holds
// MaxRequests requests at the ~250 bytes a line of the shipped traces
// takes. Past it, and past MaxRequests lines, a read fails naming the
// trace; it never stops early as if the trace ended there.
const MaxTraceBytes = 16 << 30

// Request is one trace line.
type Request struct {
	Line         int     // 1-based line in the source file
	ArrivalNs    int64   // arrival time, ns after the trace's start
	InputTokens  int     // ISL
	OutputTokens int     // requested OSL (AIPerf sends it as max_tokens)
	HashIDs      []int64 // one id per 512-token prompt block
	// Session groups the turns of one conversation ("" = a standalone
	// request). A later turn is sent DelayNs after the previous turn of its
	// session ended; DelayNs is the line's "delay" (ms) if given, else the
	// recorded gap since that previous turn's timestamp.
	Session string
	DelayNs int64
	// SharedPrefix tokens at the start of the prompt are the same for
	// every request of PrefixGroup (generated workloads): prefix caching
	// can then reuse them at the worker's block granularity, below the
	// 512-token granularity of HashIDs. 0 = none.
	SharedPrefix int
	PrefixGroup  int
}

// Trace is an ordered list of requests with non-decreasing arrivals.
type Trace struct {
	Name     string
	Requests []Request
}

type mooncakeLine struct {
	Session      json.RawMessage `json:"session_id"`
	Delay        *float64        `json:"delay"`
	Timestamp    *float64        `json:"timestamp"`
	InputLength  *int64          `json:"input_length"`
	OutputLength *int64          `json:"output_length"`
	HashIDs      *[]int64        `json:"hash_ids"`
}

// ReadMooncake parses a Mooncake JSONL trace. name labels errors (usually
// the file path). Blank lines are skipped; anything else that is not a valid
// request is an error naming the line and field.
func ReadMooncake(r io.Reader, name string) (*Trace, error) {
	return readMooncake(r, name, nil)
}

// readMooncake parses lines until the end or until sel says no later
// request can be kept; sel (nil = keep all) chooses the requests kept.
// Lines after the stop are not read, so not checked.
func readMooncake(r io.Reader, name string, sel func(Request) (keep, done bool)) (*Trace, error) {
	lr := newLineReader(r, name)
	t := &Trace{Name: name}
	for {
		req, ok, err := lr.nextSelected(sel)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		t.Requests = append(t.Requests, req)
	}
	if lr.parsed == 0 {
		return nil, &inputerr.Error{File: name, Line: 0, Field: "", Msg: "trace has no requests"}
	}
	return t, nil
}

// lineReader parses a Mooncake JSONL trace one request at a time,
// checking the order of timestamps and deriving session delays.
type lineReader struct {
	sc     *bufio.Scanner
	name   string
	line   int // lines read
	parsed int // requests parsed
	prevTs float64
	lastTs map[string]float64 // per session: the previous turn's timestamp
}

func newLineReader(r io.Reader, name string) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	return &lineReader{sc: sc, name: name, lastTs: map[string]float64{}}
}

// nextSelected returns the next request sel keeps (nil sel keeps every
// one), or false at the end of the input or once sel says no later
// request can be kept.
func (lr *lineReader) nextSelected(sel func(Request) (keep, done bool)) (Request, bool, error) {
	for {
		req, ok, err := lr.next()
		if err != nil || !ok {
			return Request{}, false, err
		}
		if sel == nil {
			return req, true, nil
		}
		keep, done := sel(req)
		if done {
			return Request{}, false, nil
		}
		if keep {
			return req, true, nil
		}
	}
}

// next returns the next request, or false at the end of the input; a
// line that is not a valid request is an error naming it.
func (lr *lineReader) next() (Request, bool, error) {
	for lr.sc.Scan() {
		lr.line++
		if err := lr.sc.Err(); err != nil {
			// The read failed (the size bound, a damaged gzip stream):
			// this last line may be cut short, so report the failure.
			return Request{}, false, lr.readErr(err)
		}
		if lr.line > MaxRequests {
			return Request{}, false, &inputerr.Error{File: lr.name, Line: lr.line, Msg: fmt.Sprintf("more than %d lines: routesim reads at most %d requests of a trace", MaxRequests, MaxRequests)}
		}
		b := bytes.TrimSpace(lr.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		req, ts, err := parseMooncakeLine(b, lr.name, lr.line)
		if err != nil {
			return Request{}, false, err
		}
		if lr.parsed > 0 && ts < lr.prevTs {
			return Request{}, false, &inputerr.Error{File: lr.name, Line: lr.line, Field: "timestamp", Msg: fmt.Sprintf("%g ms is earlier than the previous line's %g ms (timestamps must not decrease)", ts, lr.prevTs)}
		}
		lr.prevTs = ts
		if req.Session != "" {
			if last, ok := lr.lastTs[req.Session]; ok && req.DelayNs < 0 {
				req.DelayNs = int64(math.Round((ts - last) * 1e6))
			}
			lr.lastTs[req.Session] = ts
		}
		if req.DelayNs < 0 {
			req.DelayNs = 0
		}
		lr.parsed++
		return req, true, nil
	}
	if err := lr.sc.Err(); err != nil {
		return Request{}, false, lr.readErr(err)
	}
	return Request{}, false, nil
}

// readErr names the trace in a failed read.
func (lr *lineReader) readErr(err error) error {
	var ie *inputerr.Error
	switch {
	case errors.As(err, &ie): // the size bound: it names the trace already
		return err
	case errors.Is(err, bufio.ErrTooLong):
		return &inputerr.Error{File: lr.name, Line: lr.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
	}
	return &inputerr.Error{File: lr.name, Line: lr.line, Msg: err.Error()}
}

// decodeLine decodes one trace line with goccy/go-json, about 3× faster
// than encoding/json on these number-heavy lines (a trace's parse was a
// fifth of `run --first 1000`). A line it refuses is decoded again by
// encoding/json, whose errors name the field, and which has the last word
// (FuzzDecodeLineAgrees checks that both read every line alike).
func decodeLine(b []byte, m *mooncakeLine) error {
	if gojson.Unmarshal(b, m) == nil {
		return nil
	}
	*m = mooncakeLine{}
	return json.Unmarshal(b, m)
}

func parseMooncakeLine(b []byte, name string, line int) (Request, float64, error) {
	var m mooncakeLine
	if err := decodeLine(b, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return Request{}, 0, &inputerr.Error{File: name, Line: line, Msg: "a request must be a JSON object, not " + te.Value}
		}
		if errors.As(err, &te) {
			return Request{}, 0, &inputerr.Error{File: name, Line: line, Field: te.Field, Msg: fmt.Sprintf("%s is not a valid %s", te.Value, te.Type)}
		}
		return Request{}, 0, &inputerr.Error{File: name, Line: line, Field: "", Msg: "malformed JSON: " + err.Error()}
	}
	fail := func(field, format string, a ...any) (Request, float64, error) {
		return Request{}, 0, &inputerr.Error{File: name, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case m.Timestamp == nil:
		return fail("timestamp", "missing")
	case m.InputLength == nil:
		return fail("input_length", "missing")
	case m.OutputLength == nil:
		return fail("output_length", "missing")
	case m.HashIDs == nil:
		return fail("hash_ids", "missing")
	}
	ts, isl, osl, ids := *m.Timestamp, *m.InputLength, *m.OutputLength, *m.HashIDs
	switch {
	case math.IsNaN(ts) || ts < 0:
		return fail("timestamp", "%g ms must be ≥ 0", ts)
	case ts > maxTimestampMs:
		return fail("timestamp", "%g ms is absurd (> %g)", ts, maxTimestampMs)
	case isl < 1 || isl > MaxInputTokens:
		return fail("input_length", "%d must be in [1, %d]", isl, MaxInputTokens)
	case osl < 1 || osl > MaxOutputTokens:
		return fail("output_length", "%d must be in [1, %d]", osl, MaxOutputTokens)
	}
	if want := (isl + MooncakeBlockTokens - 1) / MooncakeBlockTokens; int64(len(ids)) != want {
		return fail("hash_ids", "has %d ids, want ceil(input_length/%d) = %d", len(ids), MooncakeBlockTokens, want)
	}
	for i, id := range ids {
		if id < 0 {
			return fail("hash_ids", "id %d at index %d must be ≥ 0", id, i)
		}
	}
	session := ""
	if len(m.Session) > 0 && string(m.Session) != "null" {
		var str string
		var num json.Number
		switch {
		case gojson.Unmarshal(m.Session, &str) == nil && str != "":
			session = str
		case gojson.Unmarshal(m.Session, &num) == nil:
			session = num.String()
		default:
			return fail("session_id", "%s must be a non-empty string or a number", m.Session)
		}
	}
	delay := int64(-1)
	if m.Delay != nil {
		if d := *m.Delay; d < 0 || math.IsNaN(d) || d > maxTimestampMs {
			return fail("delay", "%g ms must be in [0, %g]", d, maxTimestampMs)
		}
		delay = int64(math.Round(*m.Delay * 1e6))
	}
	return Request{
		Session:      session,
		DelayNs:      delay,
		Line:         line,
		ArrivalNs:    int64(math.Round(ts * 1e6)),
		InputTokens:  int(isl),
		OutputTokens: int(osl),
		HashIDs:      ids,
	}, ts, nil
}
