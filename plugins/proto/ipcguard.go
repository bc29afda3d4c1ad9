package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// checkIPC vets an Arrow IPC stream from a plugin before arrow-go reads it.
//
// arrow-go trusts the sizes and counts in IPC metadata: it allocates a
// message body of whatever length the metadata claims, and slices of
// whatever length a flatbuffer vector claims, and follows offsets wherever
// they point. A few hundred hostile or corrupted bytes can therefore make it
// allocate hundreds of gigabytes or recurse without end, which kills the
// whole server with a fatal error no recover can catch (FuzzDecodeBatch
// found the first within seconds). checkIPC walks the framing and the parts
// of the flatbuffer metadata arrow-go sizes allocations from, and checks
// every length, offset and count against the bytes actually present. What
// it lets through may still be wrong in ways that make arrow-go panic, which
// DecodeBatch recovers from.
//
// It accepts only what the SDK writes: schema, dictionary and record batch
// messages, uncompressed, ending with an end-of-stream marker or the end of
// the bytes.
func checkIPC(b []byte) error {
	pos := 0
	for pos < len(b) {
		if len(b)-pos < 4 {
			return errors.New("truncated message header")
		}
		metaLen := int64(int32(binary.LittleEndian.Uint32(b[pos:])))
		pos += 4
		if uint32(metaLen) == 0xFFFFFFFF { // continuation marker, then the length
			if len(b)-pos < 4 {
				return errors.New("truncated message header")
			}
			metaLen = int64(int32(binary.LittleEndian.Uint32(b[pos:])))
			pos += 4
		}
		if metaLen == 0 { // end of stream
			if pos != len(b) {
				return errors.New("bytes after the end-of-stream marker")
			}
			return nil
		}
		if metaLen < 0 || metaLen > int64(len(b)-pos) {
			return fmt.Errorf("message metadata of %d bytes in %d", metaLen, len(b)-pos)
		}
		meta := b[pos : pos+int(metaLen)]
		pos += int(metaLen)
		bodyLen, err := checkMessage(meta)
		if err != nil {
			return fmt.Errorf("message metadata: %w", err)
		}
		if bodyLen < 0 || bodyLen > int64(len(b)-pos) {
			return fmt.Errorf("message body of %d bytes in %d", bodyLen, len(b)-pos)
		}
		pos += int(bodyLen)
	}
	return nil
}

// Limits on the metadata's shape; real schemas are far smaller.
const (
	maxFieldDepth = 64
	maxFields     = 100_000
)

// fb reads a flatbuffer with bounds checks on every access.
type fb struct {
	buf    []byte
	fields int // Field tables visited, against maxFields
}

// table is a flatbuffer table: its position and its vtable.
type table struct {
	pos, vt, vtLen int
}

func (f *fb) u32(at int) (uint32, error) {
	if at < 0 || at > len(f.buf)-4 {
		return 0, errors.New("offset out of range")
	}
	return binary.LittleEndian.Uint32(f.buf[at:]), nil
}

func (f *fb) u16(at int) (int, error) {
	if at < 0 || at > len(f.buf)-2 {
		return 0, errors.New("offset out of range")
	}
	return int(binary.LittleEndian.Uint16(f.buf[at:])), nil
}

// table reads the table at pos.
func (f *fb) table(pos int) (table, error) {
	soff, err := f.u32(pos)
	if err != nil {
		return table{}, err
	}
	vt := int64(pos) - int64(int32(soff))
	if vt < 0 || vt > int64(len(f.buf)-4) {
		return table{}, errors.New("vtable out of range")
	}
	vtLen, _ := f.u16(int(vt))
	tLen, _ := f.u16(int(vt) + 2)
	if vtLen < 4 || int(vt)+vtLen > len(f.buf) || pos+tLen > len(f.buf) {
		return table{}, errors.New("table out of range")
	}
	return table{pos: pos, vt: int(vt), vtLen: vtLen}, nil
}

// field returns the position of a table's field at vtable slot, 0 when
// absent.
func (f *fb) field(t table, slot int) (int, error) {
	if slot >= t.vtLen {
		return 0, nil
	}
	off, err := f.u16(t.vt + slot)
	if err != nil || off == 0 {
		return 0, err
	}
	return t.pos + off, nil
}

// scalar checks that a scalar field of size bytes lies in the buffer and
// returns its position (0 when absent).
func (f *fb) scalar(t table, slot, size int) (int, error) {
	at, err := f.field(t, slot)
	if err != nil || at == 0 {
		return at, err
	}
	if at > len(f.buf)-size {
		return 0, errors.New("scalar out of range")
	}
	return at, nil
}

// ref follows an offset field to what it points at (0 when absent).
func (f *fb) ref(t table, slot int) (int, error) {
	at, err := f.field(t, slot)
	if err != nil || at == 0 {
		return at, err
	}
	off, err := f.u32(at)
	if err != nil {
		return 0, err
	}
	target := int64(at) + int64(off)
	if target >= int64(len(f.buf)) {
		return 0, errors.New("reference out of range")
	}
	return int(target), nil
}

// vector checks a vector field of elements of elemSize bytes and returns
// the position of its first element and its length (0, 0 when absent).
func (f *fb) vector(t table, slot, elemSize int) (int, int, error) {
	at, err := f.ref(t, slot)
	if err != nil || at == 0 {
		return 0, 0, err
	}
	n, err := f.u32(at)
	if err != nil {
		return 0, 0, err
	}
	if int64(at)+4+int64(n)*int64(elemSize) > int64(len(f.buf)) {
		return 0, 0, fmt.Errorf("vector of %d elements out of range", n)
	}
	return at + 4, int(n), nil
}

// tables checks a vector of tables, calling check on each.
func (f *fb) tables(t table, slot int, check func(table) error) error {
	start, n, err := f.vector(t, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		at := start + 4*i
		off, _ := f.u32(at)
		sub, err := f.table(at + int(off))
		if err != nil {
			return err
		}
		if err := check(sub); err != nil {
			return err
		}
	}
	return nil
}

// subtable follows a table field (ok false when absent).
func (f *fb) subtable(t table, slot int) (table, bool, error) {
	at, err := f.ref(t, slot)
	if err != nil || at == 0 {
		return table{}, false, err
	}
	sub, err := f.table(at)
	return sub, err == nil, err
}

// The flatbuffer layout of Arrow's Message.fbs and Schema.fbs: vtable slots
// and enum values, as in arrow-go's internal/flatbuf.
const (
	slotMessageHeaderType = 6
	slotMessageHeader     = 8
	slotMessageBodyLength = 10
	slotMessageMetadata   = 12

	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3

	slotSchemaFields   = 6
	slotSchemaMetadata = 8
	slotSchemaFeatures = 10

	slotFieldName       = 4
	slotFieldTypeType   = 8
	slotFieldType       = 10
	slotFieldDictionary = 12
	slotFieldChildren   = 14
	slotFieldMetadata   = 16

	slotDictEncodingIndexType = 6
	slotDictBatchData         = 6

	slotBatchLength      = 4
	slotBatchNodes       = 6
	slotBatchBuffers     = 8
	slotBatchCompression = 10
	slotBatchVariadic    = 12

	slotKeyValueKey   = 4
	slotKeyValueValue = 6

	typeTimestamp   = 10
	typeUnion       = 14
	slotTimestampTZ = 6
	slotUnionIDs    = 6
)

// checkMessage checks a Message flatbuffer and returns its body length.
func checkMessage(meta []byte) (int64, error) {
	f := &fb{buf: meta}
	root, err := f.u32(0)
	if err != nil {
		return 0, err
	}
	msg, err := f.table(int(root))
	if err != nil {
		return 0, err
	}
	if err := f.keyValues(msg, slotMessageMetadata); err != nil {
		return 0, err
	}
	var bodyLen int64
	if at, err := f.scalar(msg, slotMessageBodyLength, 8); err != nil {
		return 0, err
	} else if at != 0 {
		bodyLen = int64(binary.LittleEndian.Uint64(meta[at:]))
	}
	kind := 0
	if at, err := f.scalar(msg, slotMessageHeaderType, 1); err != nil {
		return 0, err
	} else if at != 0 {
		kind = int(meta[at])
	}
	header, ok, err := f.subtable(msg, slotMessageHeader)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errors.New("message without a header")
	}
	switch kind {
	case headerSchema:
		err = f.schema(header)
	case headerRecordBatch:
		err = f.recordBatch(header, bodyLen)
	case headerDictionaryBatch:
		data, ok, derr := f.subtable(header, slotDictBatchData)
		switch {
		case derr != nil:
			err = derr
		case !ok:
			err = errors.New("dictionary batch without data")
		default:
			err = f.recordBatch(data, bodyLen)
		}
	default:
		err = fmt.Errorf("unsupported message type %d", kind)
	}
	return bodyLen, err
}

func (f *fb) schema(s table) error {
	if err := f.keyValues(s, slotSchemaMetadata); err != nil {
		return err
	}
	if _, _, err := f.vector(s, slotSchemaFeatures, 8); err != nil {
		return err
	}
	return f.tables(s, slotSchemaFields, func(t table) error { return f.field1(t, 1) })
}

// field1 checks a Field table and, recursively, its children.
func (f *fb) field1(t table, depth int) error {
	f.fields++
	if depth > maxFieldDepth || f.fields > maxFields {
		return errors.New("schema too deep or too large")
	}
	if _, _, err := f.vector(t, slotFieldName, 1); err != nil {
		return err
	}
	if err := f.keyValues(t, slotFieldMetadata); err != nil {
		return err
	}
	typeType := 0
	if at, err := f.scalar(t, slotFieldTypeType, 1); err != nil {
		return err
	} else if at != 0 {
		typeType = int(f.buf[at])
	}
	if typ, ok, err := f.subtable(t, slotFieldType); err != nil {
		return err
	} else if ok {
		switch typeType {
		case typeTimestamp:
			_, _, err = f.vector(typ, slotTimestampTZ, 1)
		case typeUnion:
			_, _, err = f.vector(typ, slotUnionIDs, 4)
		}
		if err != nil {
			return err
		}
	}
	if dict, ok, err := f.subtable(t, slotFieldDictionary); err != nil {
		return err
	} else if ok {
		if _, _, err := f.subtable(dict, slotDictEncodingIndexType); err != nil {
			return err
		}
	}
	return f.tables(t, slotFieldChildren, func(c table) error { return f.field1(c, depth+1) })
}

func (f *fb) keyValues(t table, slot int) error {
	return f.tables(t, slot, func(kv table) error {
		if _, _, err := f.vector(kv, slotKeyValueKey, 1); err != nil {
			return err
		}
		_, _, err := f.vector(kv, slotKeyValueValue, 1)
		return err
	})
}

// recordBatch checks a RecordBatch table against its body's length.
func (f *fb) recordBatch(t table, bodyLen int64) error {
	if at, err := f.scalar(t, slotBatchLength, 8); err != nil {
		return err
	} else if at != 0 && int64(binary.LittleEndian.Uint64(f.buf[at:])) < 0 {
		return errors.New("negative batch length")
	}
	if at, err := f.field(t, slotBatchCompression); err != nil {
		return err
	} else if at != 0 {
		return errors.New("compressed batches are not supported")
	}
	start, n, err := f.vector(t, slotBatchNodes, 16)
	if err != nil {
		return err
	}
	for i := range n {
		at := start + 16*i
		length := int64(binary.LittleEndian.Uint64(f.buf[at:]))
		nulls := int64(binary.LittleEndian.Uint64(f.buf[at+8:]))
		if length < 0 || nulls < 0 || nulls > length {
			return errors.New("invalid field node")
		}
	}
	start, nbuf, err := f.vector(t, slotBatchBuffers, 16)
	if err != nil {
		return err
	}
	for i := range nbuf {
		at := start + 16*i
		off := int64(binary.LittleEndian.Uint64(f.buf[at:]))
		size := int64(binary.LittleEndian.Uint64(f.buf[at+8:]))
		if off < 0 || size < 0 || off > bodyLen || size > bodyLen-off {
			return errors.New("buffer outside the message body")
		}
	}
	start, n, err = f.vector(t, slotBatchVariadic, 8)
	if err != nil {
		return err
	}
	var total int64
	for i := range n {
		c := int64(binary.LittleEndian.Uint64(f.buf[start+8*i:]))
		if c < 0 || c > int64(nbuf) {
			return errors.New("invalid variadic buffer count")
		}
		total += c
	}
	if total > int64(nbuf) {
		return errors.New("invalid variadic buffer counts")
	}
	return nil
}
