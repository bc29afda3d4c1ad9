package proto

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Arrow data from a plugin is checked before anyone reads it: arrow-go
// builds arrays from IPC without checking that offsets stay within their
// buffers or that children are long enough, so a batch that decodes fine can
// still panic in the code that reads it (in the server, out of reach of any
// recover), or worse, be handed to native code such as DuckDB's Arrow
// reader. validateColumn checks what element access relies on, for the
// types supportedType accepts.

// supportedType reports whether columns of type dt can cross the protocol:
// every fixed-width type, binary and string (also large), lists (also large
// and fixed-size), maps, structs and dictionaries of these. Unions, views and
// run-end encoding are not (yet) validated, so they are refused.
func supportedType(dt arrow.DataType) error {
	switch t := dt.(type) {
	case *arrow.NullType, *arrow.BinaryType, *arrow.StringType, *arrow.LargeBinaryType, *arrow.LargeStringType:
		return nil
	case *arrow.ListType:
		return supportedType(t.Elem())
	case *arrow.LargeListType:
		return supportedType(t.Elem())
	case *arrow.FixedSizeListType:
		return supportedType(t.Elem())
	case *arrow.MapType:
		return supportedType(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if err := supportedType(f.Type); err != nil {
				return err
			}
		}
		return nil
	case *arrow.DictionaryType:
		return supportedType(t.ValueType)
	case arrow.FixedWidthDataType:
		return nil
	}
	return fmt.Errorf("column type %s is not supported by the connector protocol", dt)
}

// checkSchemaTypes checks that every column type of schema is supported.
func checkSchemaTypes(schema *arrow.Schema) error {
	for _, f := range schema.Fields() {
		if err := supportedType(f.Type); err != nil {
			return fmt.Errorf("column %q: %w", f.Name, err)
		}
	}
	return nil
}

// validateColumn checks that the buffers of d hold every element its length
// and offset promise, recursively.
func validateColumn(d arrow.ArrayData) error {
	off, n := int64(d.Offset()), int64(d.Len())
	if off < 0 || n < 0 {
		return errors.New("negative length or offset")
	}
	end := off + n
	bufs := d.Buffers()
	buf := func(i int) []byte {
		if i < len(bufs) && bufs[i] != nil {
			return bufs[i].Bytes()
		}
		return nil
	}
	if v := buf(0); v != nil && int64(len(v))*8 < end {
		return errors.New("validity bitmap too short")
	}
	switch t := d.DataType().(type) {
	case *arrow.NullType:
		return nil
	case *arrow.BinaryType, *arrow.StringType:
		_, err := checkOffsets(buf(1), 4, off, n, int64(len(buf(2))))
		return err
	case *arrow.LargeBinaryType, *arrow.LargeStringType:
		_, err := checkOffsets(buf(1), 8, off, n, int64(len(buf(2))))
		return err
	case *arrow.ListType, *arrow.MapType:
		return checkList(d, buf(1), 4, off, n)
	case *arrow.LargeListType:
		return checkList(d, buf(1), 8, off, n)
	case *arrow.FixedSizeListType:
		if len(d.Children()) != 1 {
			return errors.New("fixed-size list without values")
		}
		child := d.Children()[0]
		if int64(child.Len()) < end*int64(t.Len()) {
			return errors.New("fixed-size list values too short")
		}
		return validateColumn(child)
	case *arrow.StructType:
		if len(d.Children()) != len(t.Fields()) {
			return errors.New("struct children do not match its fields")
		}
		for _, c := range d.Children() {
			if int64(c.Len()) < end {
				return errors.New("struct child too short")
			}
			if err := validateColumn(c); err != nil {
				return err
			}
		}
		return nil
	case *arrow.DictionaryType:
		return checkDictionary(d, t, buf(0), buf(1), off, n)
	case arrow.FixedWidthDataType:
		if n > 0 && int64(len(buf(1)))*8 < end*int64(t.BitWidth()) {
			return errors.New("values buffer too short")
		}
		return nil
	}
	return fmt.Errorf("column type %s is not supported by the connector protocol", d.DataType())
}

// checkOffsets checks n+1 offsets of width bytes from element off: in the
// buffer, never decreasing, within [0, limit]. It returns the last offset.
func checkOffsets(b []byte, width int, off, n, limit int64) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	if int64(len(b)) < (off+n+1)*int64(width) {
		return 0, errors.New("offsets buffer too short")
	}
	at := func(i int64) int64 {
		if width == 4 {
			return int64(int32(binary.LittleEndian.Uint32(b[i*4:])))
		}
		return int64(binary.LittleEndian.Uint64(b[i*8:]))
	}
	prev := at(off)
	if prev < 0 {
		return 0, errors.New("negative offset")
	}
	for i := off + 1; i <= off+n; i++ {
		cur := at(i)
		if cur < prev {
			return 0, errors.New("decreasing offsets")
		}
		prev = cur
	}
	if prev > limit {
		return 0, errors.New("offsets beyond the data")
	}
	return prev, nil
}

func checkList(d arrow.ArrayData, offsets []byte, width int, off, n int64) error {
	if len(d.Children()) != 1 {
		return errors.New("list without values")
	}
	child := d.Children()[0]
	if _, err := checkOffsets(offsets, width, off, n, int64(child.Len())); err != nil {
		return err
	}
	return validateColumn(child)
}

func checkDictionary(d arrow.ArrayData, t *arrow.DictionaryType, validity, indices []byte, off, n int64) error {
	dict := d.Dictionary()
	if dict == nil {
		return errors.New("dictionary column without a dictionary")
	}
	if err := validateColumn(dict); err != nil {
		return err
	}
	idxType, ok := t.IndexType.(arrow.FixedWidthDataType)
	if !ok {
		return errors.New("dictionary index type is not an integer")
	}
	width := int64(idxType.BitWidth() / 8)
	if width != 1 && width != 2 && width != 4 && width != 8 {
		return errors.New("dictionary index type is not an integer")
	}
	if n > 0 && int64(len(indices)) < (off+n)*width {
		return errors.New("dictionary indices too short")
	}
	unsigned := arrow.IsUnsignedInteger(t.IndexType.ID())
	size := uint64(dict.Len())
	for i := off; i < off+n; i++ {
		if validity != nil && validity[i/8]&(1<<(i%8)) == 0 {
			continue // null: its index is never read
		}
		var raw uint64
		switch width {
		case 1:
			raw = uint64(indices[i])
		case 2:
			raw = uint64(binary.LittleEndian.Uint16(indices[i*2:]))
		case 4:
			raw = uint64(binary.LittleEndian.Uint32(indices[i*4:]))
		default:
			raw = binary.LittleEndian.Uint64(indices[i*8:])
		}
		if !unsigned { // sign-extend
			shift := 64 - 8*width
			if int64(raw<<shift)>>shift < 0 {
				return errors.New("dictionary index out of range")
			}
		}
		if raw >= size {
			return errors.New("dictionary index out of range")
		}
	}
	return nil
}
