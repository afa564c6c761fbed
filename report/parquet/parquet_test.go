package parquet_test

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/routesim/routesim/report/parquet"
	"github.com/routesim/routesim/report/parquet/parquettest"
)

// table is a test table of n rows with every kind, required and optional,
// nulls at different strides, empty and non-ASCII strings, and floats
// that are negative, zero, tiny and huge.
func table(n int) []parquet.Column {
	cols := []parquet.Column{
		{Name: "id", Kind: parquet.Int64},
		{Name: "ttft_ms", Unit: "ms", Kind: parquet.Float64, Null: []bool{}},
		{Name: "status", Kind: parquet.String},
		{Name: "worker", Kind: parquet.Int64, Null: []bool{}},
		{Name: "reason", Kind: parquet.String, Null: []bool{}},
		{Name: "x", Unit: "fraction", Kind: parquet.Float64},
	}
	for i := 0; i < n; i++ {
		cols[0].Ints = append(cols[0].Ints, int64(i*7919%1000003)-500)
		cols[1].Floats = append(cols[1].Floats, float64(i)*1.37)
		cols[1].Null = append(cols[1].Null, i%97 == 0)
		cols[2].Strings = append(cols[2].Strings, []string{"ok", "rejected-busy", "", "délai"}[i%4])
		cols[3].Ints = append(cols[3].Ints, int64(i%5))
		cols[3].Null = append(cols[3].Null, i%5 == 0)
		cols[4].Strings = append(cols[4].Strings, fmt.Sprint("r", i))
		cols[4].Null = append(cols[4].Null, i%3 == 0)
		cols[5].Floats = append(cols[5].Floats, []float64{-2.5, 0, 5e-324, math.MaxFloat64, 1.0 / 3}[i%5])
	}
	return cols
}

// TestWriteReadBack: every column reads back (arrow-go's parquet/file
// reader) with its name, type, unit, nullability, nulls and values; the
// key-value metadata holds the Arrow schema of the written columns.
func TestWriteReadBack(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000, 70_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			cols := table(n)
			meta := []parquet.KeyValue{{Key: "routesim.table", Value: "test"}, {Key: "routesim.nulls", Value: "NULL: no such value"}}
			var buf bytes.Buffer
			if err := parquet.Write(&buf, cols, meta...); err != nil {
				t.Fatal(err)
			}
			f, err := parquettest.Read(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if f.RowGroups != 1 {
				t.Errorf("%d row groups, want 1", f.RowGroups)
			}
			wantKV := []string{"routesim.table=test", "routesim.nulls=NULL: no such value", "routesim.unit.ttft_ms=ms", "routesim.unit.x=fraction", "ARROW:schema"}
			if len(f.Keys) != len(wantKV) {
				t.Errorf("key-value metadata keys %q, want %q", f.Keys, wantKV)
			}
			for i := 0; i < len(f.Keys) && i < len(wantKV); i++ {
				if k, v, _ := strings.Cut(wantKV[i], "="); f.Keys[i] != k || (v != "" && f.Values[i] != v) {
					t.Errorf("metadata %d: %s=%s, want %s", i, f.Keys[i], f.Values[i], wantKV[i])
				}
			}
			if f.Arrow == nil || !f.Arrow.Equal(parquet.ArrowSchema(cols)) {
				t.Errorf("stored Arrow schema %v, want %v", f.Arrow, parquet.ArrowSchema(cols))
			} else {
				for i, fd := range f.Arrow.Fields() {
					if u, _ := fd.Metadata.GetValue("unit"); u != cols[i].Unit {
						t.Errorf("%s: Arrow unit %q, want %q", fd.Name, u, cols[i].Unit)
					}
				}
			}
			if len(f.Columns) != len(cols) {
				t.Fatalf("%d columns, want %d", len(f.Columns), len(cols))
			}
			for i := range cols {
				equalColumn(t, &cols[i], &f.Columns[i])
			}
		})
	}
}

func equalColumn(t *testing.T, want, got *parquet.Column) {
	t.Helper()
	if got.Name != want.Name || got.Kind != want.Kind || got.Unit != want.Unit || (got.Null == nil) != (want.Null == nil) {
		t.Errorf("column %s (kind %d, unit %q, optional %v), want %s (kind %d, unit %q, optional %v)",
			got.Name, got.Kind, got.Unit, got.Null != nil, want.Name, want.Kind, want.Unit, want.Null != nil)
		return
	}
	n := len(want.Ints) + len(want.Floats) + len(want.Strings)
	if m := len(got.Ints) + len(got.Floats) + len(got.Strings); m != n {
		t.Errorf("%s: %d values, want %d", want.Name, m, n)
		return
	}
	for r := 0; r < n; r++ {
		null := want.Null != nil && want.Null[r]
		if want.Null != nil && got.Null[r] != null {
			t.Errorf("%s row %d: null %v, want %v", want.Name, r, got.Null[r], null)
			return
		}
		if null {
			continue
		}
		ok := true
		switch want.Kind {
		case parquet.Int64:
			ok = got.Ints[r] == want.Ints[r]
		case parquet.Float64:
			ok = math.Float64bits(got.Floats[r]) == math.Float64bits(want.Floats[r])
		default:
			ok = got.Strings[r] == want.Strings[r]
		}
		if !ok {
			t.Errorf("%s row %d differs", want.Name, r)
			return
		}
	}
}

// TestParquetTypes: the physical and logical types are the ones Arrow's
// pqarrow chose for these Arrow types (the files stay readable as before).
func TestParquetTypes(t *testing.T) {
	var buf bytes.Buffer
	if err := parquet.Write(&buf, table(3)); err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"id INT64 Int(bitWidth=64, isSigned=true) required",
		"ttft_ms DOUBLE None optional",
		"status BYTE_ARRAY String required",
		"worker INT64 Int(bitWidth=64, isSigned=true) optional",
		"reason BYTE_ARRAY String optional",
		"x DOUBLE None required",
	}
	sc := rdr.MetaData().Schema
	for i := 0; i < sc.NumColumns(); i++ {
		c := sc.Column(i)
		rep := "required"
		if c.MaxDefinitionLevel() > 0 {
			rep = "optional"
		}
		if got := fmt.Sprintf("%s %s %s %s", c.Name(), c.PhysicalType(), c.LogicalType(), rep); got != want[i] {
			t.Errorf("column %d: %s, want %s", i, got, want[i])
		}
	}
	if v := rdr.MetaData().GetCreatedBy(); v != "routesim" {
		t.Errorf("created_by %q", v)
	}
}

func TestWriteRejectsRaggedColumns(t *testing.T) {
	for _, cols := range [][]parquet.Column{
		{{Name: "a", Kind: parquet.Int64, Ints: []int64{1}}, {Name: "b", Kind: parquet.Int64, Ints: []int64{1, 2}}},
		{{Name: "a", Kind: parquet.Int64, Ints: []int64{1}, Null: []bool{false, true}}},
		nil,
	} {
		if err := parquet.Write(&bytes.Buffer{}, cols); err == nil {
			t.Errorf("accepted %v", cols)
		}
	}
	cols := table(2)
	if err := parquet.Write(&bytes.Buffer{}, cols, parquet.KeyValue{Key: "routesim.unit.ttft_ms", Value: "s"}); err == nil {
		t.Error("accepted a metadata key that a column's unit also sets")
	}
}
