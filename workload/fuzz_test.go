package workload

import (
	"bytes"
	"testing"

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
