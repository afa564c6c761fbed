// Package parquet writes typed tables as Parquet files (zstd) with Apache
// Arrow for Go's low-level Parquet writer (parquet/file column writers
// over a parquet/schema tree), not its Arrow bridge pqarrow, whose imports
// pull Arrow Flight, gRPC and protobuf into the build. A column's unit is
// in the file's key-value metadata ("routesim.unit.<column>", which DuckDB's
// parquet_kv_metadata() lists) and in the Arrow field metadata ("unit") of
// the embedded Arrow schema ("ARROW:schema", as pqarrow stores it), which
// Arrow readers (pyarrow, pandas) take their schema from. The simulator
// never imports this package; the CLI does.
package parquet

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
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

// KeyValue is one entry of a file's key-value metadata.
type KeyValue struct{ Key, Value string }

// UnitKeyPrefix begins the key-value metadata key of a column's unit.
const UnitKeyPrefix = "routesim.unit."

// Write writes the columns as one Parquet file (one row group). Its
// key-value metadata is meta, then UnitKeyPrefix+name → unit for each
// column that has a unit, then the Arrow schema.
func Write(w io.Writer, cols []Column, meta ...KeyValue) error {
	if len(cols) == 0 {
		return fmt.Errorf("parquet: no columns")
	}
	rows := cols[0].len()
	for i := range cols {
		c := &cols[i]
		if c.len() != rows || (c.Null != nil && len(c.Null) != rows) {
			return fmt.Errorf("parquet: column %s has %d values, want %d", c.Name, c.len(), rows)
		}
	}
	// No dictionary encoding: a dictionary that overflows falls back to
	// plain pages mid-column, and Arrow lists the two encodings' page
	// statistics in map order — different bytes for the same table. With
	// one encoding per column the file is byte-deterministic; zstd keeps
	// repeated strings small.
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCreatedBy("routesim"),
		parquet.WithDictionaryDefault(false))
	root, err := parquetSchema(cols, props)
	if err != nil {
		return err
	}
	kv, err := keyValues(cols, meta)
	if err != nil {
		return err
	}
	fw, err := file.NewParquetWriterWithError(w, root, file.WithWriterProps(props), file.WithWriteMetadata(kv))
	if err != nil {
		return err
	}
	rg, err := fw.AppendRowGroupChecked()
	if err == nil {
		for i := range cols {
			if err = writeColumn(rg, &cols[i]); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = rg.Close()
	}
	if cerr := fw.Close(); err == nil {
		err = cerr
	}
	return err
}

// parquetSchema is the file's schema: one primitive leaf per column, typed
// as pqarrow maps the Arrow types (int64 → INT64 with a signed 64-bit
// integer logical type, float64 → DOUBLE, string → BYTE_ARRAY with the
// String logical type), optional where the column has a null mask.
func parquetSchema(cols []Column, props *parquet.WriterProperties) (*schema.GroupNode, error) {
	fields := make(schema.FieldList, len(cols))
	for i := range cols {
		c := &cols[i]
		rep := parquet.Repetitions.Required
		if c.Null != nil {
			rep = parquet.Repetitions.Optional
		}
		var (
			n   *schema.PrimitiveNode
			err error
		)
		switch c.Kind {
		case Int64:
			n, err = schema.NewPrimitiveNodeLogical(c.Name, rep, schema.NewIntLogicalType(64, true), parquet.Types.Int64, -1, -1)
		case Float64:
			n, err = schema.NewPrimitiveNodeLogical(c.Name, rep, schema.NoLogicalType{}, parquet.Types.Double, -1, -1)
		default:
			n, err = schema.NewPrimitiveNodeLogical(c.Name, rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
		}
		if err != nil {
			return nil, fmt.Errorf("parquet: column %s: %w", c.Name, err)
		}
		fields[i] = n
	}
	return schema.NewGroupNode(props.RootName(), props.RootRepetition(), fields, -1)
}

// ArrowSchema is the Arrow schema of the columns: their types, nullability
// and "unit" field metadata. Write embeds it in the file.
func ArrowSchema(cols []Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i := range cols {
		c := &cols[i]
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
	return arrow.NewSchema(fields, nil)
}

// keyValues is the file's key-value metadata: meta, the units, and last
// the Arrow schema under "ARROW:schema", base64 of an Arrow IPC stream
// holding only the schema message (what pqarrow's WithStoreSchema stores,
// there through arrow/flight's SerializeSchema, here through arrow/ipc).
func keyValues(cols []Column, meta []KeyValue) (metadata.KeyValueMetadata, error) {
	kv := metadata.KeyValueMetadata{}
	add := func(k, v string) error {
		if kv.FindValue(k) != nil {
			return fmt.Errorf("parquet: metadata key %q given twice", k)
		}
		return kv.Append(k, v)
	}
	for _, m := range meta {
		if err := add(m.Key, m.Value); err != nil {
			return nil, err
		}
	}
	for i := range cols {
		if c := &cols[i]; c.Unit != "" {
			if err := add(UnitKeyPrefix+c.Name, c.Unit); err != nil {
				return nil, err
			}
		}
	}
	var buf bytes.Buffer
	iw := ipc.NewWriter(&buf, ipc.WithSchema(ArrowSchema(cols)), ipc.WithAllocator(memory.DefaultAllocator))
	if err := iw.Close(); err != nil {
		return nil, fmt.Errorf("parquet: arrow schema: %w", err)
	}
	if err := add("ARROW:schema", base64.StdEncoding.EncodeToString(buf.Bytes())); err != nil {
		return nil, err
	}
	return kv, nil
}

// writeColumn writes column c as the row group's next column chunk: the
// defined values densely, with definition levels (1 = defined, 0 = null)
// when the column is optional.
func writeColumn(rg file.SerialRowGroupWriter, c *Column) error {
	cw, err := rg.NextColumn()
	if err != nil {
		return err
	}
	var def []int16
	if c.Null != nil {
		def = make([]int16, len(c.Null))
		for r, null := range c.Null {
			if !null {
				def[r] = 1
			}
		}
	}
	switch c.Kind {
	case Int64:
		_, err = cw.(*file.Int64ColumnChunkWriter).WriteBatch(dense(c.Ints, c.Null), def, nil)
	case Float64:
		_, err = cw.(*file.Float64ColumnChunkWriter).WriteBatch(dense(c.Floats, c.Null), def, nil)
	default:
		s := dense(c.Strings, c.Null)
		vals := make([]parquet.ByteArray, len(s))
		for i := range s {
			vals[i] = parquet.ByteArray(s[i])
		}
		_, err = cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(vals, def, nil)
	}
	if err != nil {
		return fmt.Errorf("parquet: column %s: %w", c.Name, err)
	}
	if err := cw.Close(); err != nil {
		return fmt.Errorf("parquet: column %s: %w", c.Name, err)
	}
	return nil
}

// dense drops the null rows' placeholders from vs.
func dense[T any](vs []T, null []bool) []T {
	if null == nil {
		return vs
	}
	out := make([]T, 0, len(vs))
	for r, v := range vs {
		if !null[r] {
			out = append(out, v)
		}
	}
	return out
}
