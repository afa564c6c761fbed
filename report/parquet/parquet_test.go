package parquet

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func TestWriteReadBack(t *testing.T) {
	cols := []Column{
		{Name: "n", Kind: Int64, Ints: []int64{2, 4}},
		{Name: "policy", Kind: String, Strings: []string{"round-robin", "kv"}},
		{Name: "ttft_ms_p50", Unit: "ms", Kind: Float64, Floats: []float64{12.5, 0}, Null: []bool{false, true}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, cols); err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 2 || tbl.NumCols() != 3 {
		t.Fatalf("%d rows, %d columns", tbl.NumRows(), tbl.NumCols())
	}
	sch := tbl.Schema()
	if f := sch.Field(0); f.Type.ID() != arrow.INT64 {
		t.Errorf("n is %s", f.Type)
	}
	f := sch.Field(2)
	if f.Type.ID() != arrow.FLOAT64 {
		t.Errorf("ttft_ms_p50 is %s", f.Type)
	}
	if u, ok := f.Metadata.GetValue("unit"); !ok || u != "ms" {
		t.Errorf("unit metadata %q, %v", u, ok)
	}
	col := tbl.Column(2).Data().Chunk(0).(*array.Float64)
	if col.Value(0) != 12.5 || !col.IsNull(1) {
		t.Errorf("values %v", col)
	}
	pol := tbl.Column(1).Data().Chunk(0).(*array.String)
	if pol.Value(1) != "kv" {
		t.Errorf("policy %q", pol.Value(1))
	}
	var again bytes.Buffer
	Write(&again, cols)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("the same table written twice gave different bytes")
	}
}

func TestWriteRejectsRaggedColumns(t *testing.T) {
	err := Write(&bytes.Buffer{}, []Column{{Name: "a", Kind: Int64, Ints: []int64{1}}, {Name: "b", Kind: Int64, Ints: []int64{1, 2}}})
	if err == nil {
		t.Error("accepted columns of different lengths")
	}
}
