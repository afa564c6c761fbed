// Package parquet writes typed tables as Parquet files with Apache Arrow
// for Go (pqarrow, zstd). Each column carries its unit in the Arrow field
// metadata ("unit"), stored in the file's embedded Arrow schema. The
// simulator never imports this package; the CLI does.
package parquet

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Kind is a column's type.
type Kind int

// Column types.
const (
	Int64 Kind = iota
	Float64
	String
)

// Column is one typed column. Exactly the slice matching Kind is used;
// Null marks undefined values (same length, or nil for none).
type Column struct {
	Name    string
	Unit    string
	Kind    Kind
	Ints    []int64
	Floats  []float64
	Strings []string
	Null    []bool
}

func (c *Column) len() int {
	switch c.Kind {
	case Int64:
		return len(c.Ints)
	case Float64:
		return len(c.Floats)
	}
	return len(c.Strings)
}

// Write writes the columns as one Parquet file (one row group).
func Write(w io.Writer, cols []Column) error {
	if len(cols) == 0 {
		return fmt.Errorf("parquet: no columns")
	}
	rows := cols[0].len()
	fields := make([]arrow.Field, len(cols))
	for i := range cols {
		c := &cols[i]
		if c.len() != rows || (c.Null != nil && len(c.Null) != rows) {
			return fmt.Errorf("parquet: column %s has %d values, want %d", c.Name, c.len(), rows)
		}
		var t arrow.DataType
		switch c.Kind {
		case Int64:
			t = arrow.PrimitiveTypes.Int64
		case Float64:
			t = arrow.PrimitiveTypes.Float64
		default:
			t = arrow.BinaryTypes.String
		}
		md := arrow.Metadata{}
		if c.Unit != "" {
			md = arrow.NewMetadata([]string{"unit"}, []string{c.Unit})
		}
		fields[i] = arrow.Field{Name: c.Name, Type: t, Nullable: c.Null != nil, Metadata: md}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range cols {
		c := &cols[i]
		for r := 0; r < rows; r++ {
			if c.Null != nil && c.Null[r] {
				b.Field(i).AppendNull()
				continue
			}
			switch c.Kind {
			case Int64:
				b.Field(i).(*array.Int64Builder).Append(c.Ints[r])
			case Float64:
				b.Field(i).(*array.Float64Builder).Append(c.Floats[r])
			default:
				b.Field(i).(*array.StringBuilder).Append(c.Strings[r])
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	// No dictionary encoding: a dictionary that overflows falls back to
	// plain pages mid-column, and Arrow lists the two encodings' page
	// statistics in map order — different bytes for the same table. With
	// one encoding per column the file is byte-deterministic; zstd keeps
	// repeated strings small.
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCreatedBy("routesim"),
		parquet.WithDictionaryDefault(false))
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return err
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return err
	}
	return fw.Close()
}
