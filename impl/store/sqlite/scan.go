package sqlite

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Scanners for the column encodings of this store, so that scan functions
// read rows straight into their fields (uuid.UUID scans its own text).

// timeCol scans a time stored as timeLayout text.
type timeCol struct{ dst *time.Time }

func (c timeCol) Scan(src any) error {
	s, ok := src.(string)
	if !ok {
		return fmt.Errorf("stored time: unexpected %T", src)
	}
	t, err := parseTime(s)
	if err != nil {
		return err
	}
	*c.dst = t
	return nil
}

// nullTimeCol scans a nullable time into a pointer (nil for NULL).
type nullTimeCol struct{ dst **time.Time }

func (c nullTimeCol) Scan(src any) error {
	if src == nil {
		*c.dst = nil
		return nil
	}
	var t time.Time
	if err := (timeCol{&t}).Scan(src); err != nil {
		return err
	}
	*c.dst = &t
	return nil
}

// nullUUIDCol scans a nullable UUID into a pointer (nil for NULL).
type nullUUIDCol struct{ dst **uuid.UUID }

func (c nullUUIDCol) Scan(src any) error {
	if src == nil {
		*c.dst = nil
		return nil
	}
	var id uuid.UUID
	if err := id.Scan(src); err != nil {
		return fmt.Errorf("stored id: %w", err)
	}
	*c.dst = &id
	return nil
}
