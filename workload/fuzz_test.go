package workload

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/routesim/routesim/internal/inputerr"
)

// FuzzMooncakeReader: any input either fails with a positioned error or
// yields requests that satisfy the reader's guarantees.
func FuzzMooncakeReader(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"timestamp": 0, "input_length": 1024, "output_length": 3, "hash_ids": [1, 2]}`))
	f.Add([]byte(`{"timestamp": 3, "input_length": 10}` + "\n" + `{"timestamp": 1}`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadMooncake(bytes.NewReader(data), "fuzz")
		if err != nil {
			if _, ok := err.(*inputerr.Error); !ok {
				t.Fatalf("error %T %v is not positioned", err, err)
			}
			return
		}
		var prev int64
		for i, r := range tr.Requests {
			if r.InputTokens < 1 || r.OutputTokens < 1 || r.ArrivalNs < prev || r.Line < 1 {
				t.Fatalf("request %d violates the guarantees: %+v", i, r)
			}
			if len(r.HashIDs) != (r.InputTokens+MooncakeBlockTokens-1)/MooncakeBlockTokens {
				t.Fatalf("request %d: %d hash ids for %d tokens", i, len(r.HashIDs), r.InputTokens)
			}
			prev = r.ArrivalNs
		}
	})
}

// FuzzStream: on any input and filter, Stream either refuses what Read
// refuses (or a session, which only a held trace can replay), or yields
// exactly the jobs Prepare(Read(...)) holds.
func FuzzStream(f *testing.F) {
	f.Add([]byte(good), uint8(0), uint8(0), uint8(1))
	f.Add([]byte(`{"timestamp": 0, "input_length": 1024, "output_length": 3, "hash_ids": [1, 2]}`+"\n"+`{"timestamp": 5, "input_length": 600, "output_length": 3, "hash_ids": [1, 9]}`), uint8(1), uint8(1), uint8(3))
	f.Add([]byte(`{"timestamp": 0, "input_length": 10, "output_length": 3, "hash_ids": [1], "session_id": "s"}`), uint8(0), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, skip, first, repeat uint8) {
		flt := Filter{Skip: int(skip % 4), First: int(first % 5), Repeat: int(repeat % 4), RateScale: 1}
		open := func() (io.Reader, string, func() error, error) {
			return bytes.NewReader(data), "fuzz", func() error { return nil }, nil
		}
		wl, serr := stream(open, flt, 16)
		tr, rerr := readMooncake(bytes.NewReader(data), "fuzz", flt.selector()) // Read's body
		if rerr == nil {
			tr, rerr = tr.finish(flt)
		}
		if serr != nil {
			if rerr == nil && !strings.Contains(serr.Error(), "session_id") {
				t.Fatalf("Stream refused (%v) what Read accepts", serr)
			}
			return
		}
		if rerr != nil {
			t.Fatalf("Stream accepted what Read refuses (%v)", rerr)
		}
		want, err := Prepare(tr, 16)
		if err != nil {
			t.Fatal(err)
		}
		got, err := drain(t, wl)
		if err != nil || !reflect.DeepEqual(got, want.Jobs) || wl.Len() != len(want.Jobs) || wl.Span() != want.Span() {
			t.Fatalf("streamed %d jobs (error %v), Prepare(Read) holds %d", len(got), err, len(want.Jobs))
		}
	})
}

// FuzzDecodeLineAgrees: whatever line goccy/go-json accepts (the fast
// path of decodeLine), encoding/json accepts too and decodes to the same
// fields, so the fast path never changes what a trace means.
func FuzzDecodeLineAgrees(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"timestamp": 1.5e3, "input_length": 1024, "output_length": 3, "hash_ids": [1, 2], "session_id": 7, "delay": 0.25}`))
	f.Add([]byte(`{"timestamp": 0, "input_length": 10, "output_length": 3, "hash_ids": [1], "session_id": "s\u00e9", "extra": {"a": [1, {"b": null}]}}`))
	f.Add([]byte(`{"timestamp": 0, "TIMESTAMP": 5, "input_length": 10.0, "hash_ids": [1,]}`))
	f.Add([]byte(`{"timestamp": 0, "TIMESTAMP": 5, "Input_Length": 10, "output_length": 1, "hash_ids": [1], "hash_ids": [2, 3]}`))
	f.Add([]byte(`{"timestamp": null, "input_length": 1e2, "output_length": -0, "hash_ids": null, "session_id": [1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, std mooncakeLine
		if gojson.Unmarshal(b, &fast) != nil {
			return // decodeLine falls back to encoding/json
		}
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("goccy accepted %q, encoding/json refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("%q decodes differently: goccy %s, encoding/json %s", b, show(fast), show(std))
		}
	})
}

func show(m mooncakeLine) string {
	b, _ := json.Marshal(m)
	return string(b)
}
