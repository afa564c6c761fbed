package parquet_test

import (
	"bytes"
	"testing"

	"github.com/routesim/routesim/report/parquet"
)

// TestWriteIsByteDeterministic: the same table written 20 times gives the
// same bytes, including columns large and varied enough that a dictionary
// encoder would fall back to plain pages mid-column (whose page-encoding
// statistics Arrow used to list in map order).
func TestWriteIsByteDeterministic(t *testing.T) {
	const n = 300_000
	cols := []parquet.Column{{Name: "id", Kind: parquet.Int64}, {Name: "t_ms", Unit: "ms", Kind: parquet.Float64, Null: make([]bool, n)}, {Name: "status", Kind: parquet.String}}
	for i := 0; i < n; i++ {
		cols[0].Ints = append(cols[0].Ints, int64(i*7919%1000003))
		cols[1].Floats = append(cols[1].Floats, float64(i)*1.37)
		cols[1].Null[i] = i%97 == 0
		cols[2].Strings = append(cols[2].Strings, []string{"ok", "rejected-busy", "failed-timeout"}[i%3])
	}
	var first []byte
	for k := 0; k < 20; k++ {
		var b bytes.Buffer
		if err := parquet.Write(&b, cols); err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			first = b.Bytes()
		} else if !bytes.Equal(first, b.Bytes()) {
			t.Fatalf("write %d differs from the first (%d vs %d bytes)", k, b.Len(), len(first))
		}
	}
}
