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
	Name     string
	Err      error
	Duration time.Duration
}

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
		start := time.Now()
		err := c.Run(ctx, s)
		rep.Results = append(rep.Results, Result{Name: c.Name, Err: err, Duration: time.Since(start)})
	}
	rep.Uncovered = s.Uncovered()
	return rep
}

// WriteText prints one line per check and a summary.
func (r Report) WriteText(w io.Writer) {
	failed := 0
	for _, res := range r.Results {
		if res.Err != nil {
			failed++
			fmt.Fprintf(w, "FAIL  %-45s %6.2fs\n      %s\n", res.Name, res.Duration.Seconds(), strings.ReplaceAll(res.Err.Error(), "\n", "\n      "))
			continue
		}
		fmt.Fprintf(w, "ok    %-45s %6.2fs\n", res.Name, res.Duration.Seconds())
	}
	if len(r.Uncovered) > 0 {
		fmt.Fprintf(w, "FAIL  operations no check exercised: %s\n", strings.Join(r.Uncovered, ", "))
	}
	fmt.Fprintf(w, "\n%d checks, %d failed, %d operations uncovered\n", len(r.Results), failed, len(r.Uncovered))
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
	Name    string        `xml:"name,attr"`
	Time    float64       `xml:"time,attr"`
	Failure *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML; uncovered operations are one
// failed case.
func (r Report) WriteJUnit(w io.Writer) error {
	suite := junitSuite{Name: "strata-conformance"}
	for _, res := range r.Results {
		c := junitCase{Name: res.Name, Time: res.Duration.Seconds()}
		if res.Err != nil {
			c.Failure = &junitFailure{Message: firstLines(res.Err.Error(), 1), Text: res.Err.Error()}
			suite.Failures++
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
