package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestReportShowsNotes: a check that returns a Partial passes, and its note
// is on its line, in the summary's count and in the JUnit system-out.
func TestReportShowsNotes(t *testing.T) {
	t.Parallel()
	s := &Suite{}
	var rep Report
	for _, c := range []Check{
		{"ok", func(context.Context, *Suite) error { return nil }},
		{"partial", func(context.Context, *Suite) error { return &Partial{Note: "expiry not observed"} }},
		{"failed", func(context.Context, *Suite) error { return errors.New("boom") }},
	} {
		rep.Results = append(rep.Results, s.runCheck(context.Background(), c))
	}
	var text strings.Builder
	rep.WriteText(&text)
	for _, want := range []string{"ok    partial", "      note: expiry not observed", "3 checks, 1 failed, 1 passed with a note"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var junit strings.Builder
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), "<system-out>note: expiry not observed</system-out>") || !strings.Contains(junit.String(), `failures="1"`) {
		t.Errorf("JUnit report:\n%s", junit.String())
	}
}
