package realtime_test

import (
	"testing"

	"github.com/stratahq/strata/impl/realtime"
)

func TestParseSinceTellsAbsentFromZero(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in     string
		since  int64
		replay bool
		bad    bool
	}{
		{"", 0, false, false},
		{"0", 0, true, false},
		{"17", 17, true, false},
		{"-1", 0, false, true},
		{"abc", 0, false, true},
		{"1.5", 0, false, true},
	} {
		since, replay, err := realtime.ParseSince(c.in)
		if since != c.since || replay != c.replay || (err != nil) != c.bad {
			t.Errorf("ParseSince(%q) = %d, %v, %v; want %d, %v, error %v", c.in, since, replay, err, c.since, c.replay, c.bad)
		}
	}
}
