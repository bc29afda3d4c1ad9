package conformance

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Result is the outcome of one check.
type Result struct {
	Name string
	Err  error
	// Note, on a passed check, says what it could not observe (see Partial).
	Note     string
	Duration time.Duration
}

// Partial is what a check returns when everything it observed conforms but
// part of the behaviour was out of its reach, e.g. a token that lives longer
// than Config.MaxExpiryWait. The check passes; the report shows the note on
// the check's line, counts such checks in the summary and puts the note in
// the JUnit case's system-out, so nothing goes unobserved silently.
type Partial struct {
	Note string
}

func (p *Partial) Error() string { return "not observed: " + p.Note }

// Report is a whole run.
type Report struct {
	Results   []Result
	Uncovered []string
}

// Failed reports whether any check failed or any operation went unexercised.
func (r Report) Failed() bool {
	if len(r.Uncovered) > 0 {
		return true
	}
	for _, res := range r.Results {
		if res.Err != nil {
			return true
		}
	}
	return false
}

// Run runs every check in order and reports which operations of the
// document no check exercised.
func (s *Suite) Run(ctx context.Context, checks []Check) Report {
	var rep Report
	for _, c := range checks {
		rep.Results = append(rep.Results, s.runCheck(ctx, c))
	}
	rep.Uncovered = s.Uncovered()
	return rep
}

func (s *Suite) runCheck(ctx context.Context, c Check) Result {
	start := time.Now()
	err := c.Run(ctx, s)
	res := Result{Name: c.Name, Err: err, Duration: time.Since(start)}
	if p, ok := err.(*Partial); ok {
		res.Err, res.Note = nil, p.Note
	}
	return res
}

// WriteText prints one line per check and a summary.
func (r Report) WriteText(w io.Writer) {
	failed, noted := 0, 0
	for _, res := range r.Results {
		if res.Err != nil {
			failed++
			fmt.Fprintf(w, "FAIL  %-45s %6.2fs\n      %s\n", res.Name, res.Duration.Seconds(), strings.ReplaceAll(res.Err.Error(), "\n", "\n      "))
			continue
		}
		fmt.Fprintf(w, "ok    %-45s %6.2fs\n", res.Name, res.Duration.Seconds())
		if res.Note != "" {
			noted++
			fmt.Fprintf(w, "      note: %s\n", res.Note)
		}
	}
	if len(r.Uncovered) > 0 {
		fmt.Fprintf(w, "FAIL  operations no check exercised: %s\n", strings.Join(r.Uncovered, ", "))
	}
	fmt.Fprintf(w, "\n%d checks, %d failed, %d passed with a note of what they could not observe, %d operations uncovered\n",
		len(r.Results), failed, noted, len(r.Uncovered))
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML; uncovered operations are one
// failed case, and a passed check's note is its system-out.
func (r Report) WriteJUnit(w io.Writer) error {
	suite := junitSuite{Name: "strata-conformance"}
	for _, res := range r.Results {
		c := junitCase{Name: res.Name, Time: res.Duration.Seconds()}
		if res.Err != nil {
			c.Failure = &junitFailure{Message: firstLines(res.Err.Error(), 1), Text: res.Err.Error()}
			suite.Failures++
		} else if res.Note != "" {
			c.SystemOut = "note: " + res.Note
		}
		suite.Time += c.Time
		suite.Cases = append(suite.Cases, c)
	}
	cov := junitCase{Name: "coverage/every-operation-exercised"}
	if len(r.Uncovered) > 0 {
		cov.Failure = &junitFailure{Message: "operations no check exercised", Text: strings.Join(r.Uncovered, "\n")}
		suite.Failures++
	}
	suite.Cases = append(suite.Cases, cov)
	suite.Tests = len(suite.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	return enc.Encode(suite)
}
