// Package parquettest reads back, for tests, the Parquet files that
// package parquet writes: every column as a parquet.Column, the file's
// key-value metadata, and the embedded Arrow schema. It uses arrow-go's
// low-level reader (parquet/file), as the writer does.
package parquettest

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/routesim/routesim/report/parquet"
)

// File is a Parquet file read back.
type File struct {
	// Columns hold every value; a null row's value is the zero value
	// and its Null entry true. Null is nil for a required column.
	Columns []parquet.Column
	// KV is the file's key-value metadata in file order (keys, values).
	Keys, Values []string
	// Arrow is the schema stored under "ARROW:schema", nil if none.
	Arrow *arrow.Schema
	// RowGroups is the number of row groups.
	RowGroups int
}

// KV returns the metadata value for key, and whether it is present.
func (f *File) KV(key string) (string, bool) {
	for i, k := range f.Keys {
		if k == key {
			return f.Values[i], true
		}
	}
	return "", false
}

// Column returns the column named name, or nil.
func (f *File) Column(name string) *parquet.Column {
	for i := range f.Columns {
		if f.Columns[i].Name == name {
			return &f.Columns[i]
		}
	}
	return nil
}

// Read reads a whole file written by parquet.Write. Column units come
// from the Arrow schema's "unit" field metadata.
func Read(data []byte) (*File, error) {
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	md := rdr.MetaData()
	out := &File{RowGroups: rdr.NumRowGroups()}
	kv := md.KeyValueMetadata()
	out.Keys, out.Values = kv.Keys(), kv.Values()
	if v := kv.FindValue("ARROW:schema"); v != nil {
		raw, err := base64.StdEncoding.DecodeString(*v)
		if err != nil {
			return nil, fmt.Errorf("ARROW:schema: %w", err)
		}
		ir, err := ipc.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("ARROW:schema: %w", err)
		}
		out.Arrow = ir.Schema()
		ir.Release()
	}
	sc := md.Schema
	rows := rdr.NumRows()
	for i := 0; i < sc.NumColumns(); i++ {
		col := sc.Column(i)
		c := parquet.Column{Name: col.Name()}
		if out.Arrow != nil {
			if idx := out.Arrow.FieldIndices(c.Name); len(idx) == 1 {
				c.Unit, _ = out.Arrow.Field(idx[0]).Metadata.GetValue("unit")
			}
		}
		if err := readColumn(rdr, i, col, rows, &c); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		out.Columns = append(out.Columns, c)
	}
	return out, nil
}

// readColumn reads column i of every row group into c.
func readColumn(rdr *file.Reader, i int, col *schema.Column, rows int64, c *parquet.Column) error {
	optional := col.MaxDefinitionLevel() > 0
	if optional {
		c.Null = make([]bool, 0, rows)
	}
	switch col.PhysicalType() {
	case pq.Types.Int64:
		c.Kind = parquet.Int64
	case pq.Types.Double:
		c.Kind = parquet.Float64
	case pq.Types.ByteArray:
		c.Kind = parquet.String
	default:
		return fmt.Errorf("physical type %s", col.PhysicalType())
	}
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := rdr.RowGroup(g)
		n := rg.NumRows()
		cr, err := rg.Column(i)
		if err != nil {
			return err
		}
		def := make([]int16, n)
		var vals int
		var got int64
		switch r := cr.(type) {
		case *file.Int64ColumnChunkReader:
			v := make([]int64, n)
			got, vals, err = readAll(n, def, func(b int64, d []int16, at int) (int64, int, error) { return r.ReadBatch(b, v[at:], d, nil) })
			spread(&c.Ints, v[:vals], def, optional)
		case *file.Float64ColumnChunkReader:
			v := make([]float64, n)
			got, vals, err = readAll(n, def, func(b int64, d []int16, at int) (int64, int, error) { return r.ReadBatch(b, v[at:], d, nil) })
			spread(&c.Floats, v[:vals], def, optional)
		case *file.ByteArrayColumnChunkReader:
			v := make([]pq.ByteArray, n)
			got, vals, err = readAll(n, def, func(b int64, d []int16, at int) (int64, int, error) { return r.ReadBatch(b, v[at:], d, nil) })
			s := make([]string, vals)
			for k := range s {
				s[k] = string(v[k])
			}
			spread(&c.Strings, s, def, optional)
		default:
			return fmt.Errorf("reader %T", cr)
		}
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("row group %d: %d of %d rows", g, got, n)
		}
		if optional {
			for _, d := range def[:n] {
				c.Null = append(c.Null, d == 0)
			}
		}
	}
	return nil
}

// readAll calls batch until n levels are read; it returns the levels and
// the (dense) values read.
func readAll(n int64, def []int16, batch func(n int64, def []int16, at int) (int64, int, error)) (int64, int, error) {
	var total int64
	var vals int
	for total < n {
		t, v, err := batch(n-total, def[total:], vals)
		if err != nil {
			return total, vals, err
		}
		if t == 0 {
			break
		}
		total += t
		vals += v
	}
	return total, vals, nil
}

// spread appends the dense values to dst, with a zero value at each null
// row of an optional column.
func spread[T any](dst *[]T, dense []T, def []int16, optional bool) {
	if !optional {
		*dst = append(*dst, dense...)
		return
	}
	k := 0
	for _, d := range def {
		var zero T
		if d == 0 {
			*dst = append(*dst, zero)
			continue
		}
		*dst = append(*dst, dense[k])
		k++
	}
}
