package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Check is one named conformance check.
type Check struct {
	Name string
	Run  func(ctx context.Context, s *Suite) error
}

// Checks returns every check of the suite, in order.
func Checks() []Check {
	return slices.Concat(httpChecks(), authChecks(), dataPlatformChecks(), contentChecks(), expiryChecks())
}

func httpChecks() []Check {
	return []Check{
		{"health/healthz", checkHealthz},
		{"health/readyz", checkReadyz},
		{"ops/metrics", checkMetrics},
		{"ops/openapi-document", checkOpenAPIDocument},
		{"http/request-id", checkRequestID},
		{"http/unknown-route-404", checkUnknownRoute},
		{"http/wrong-method-405", checkWrongMethod},
		{"http/body-too-large-413", checkBodyTooLarge},
		{"http/wrong-content-type-415", checkWrongContentType},
		{"http/validation-error-400", checkValidationError},
		{"http/every-operation-documented", checkEveryOperation},
	}
}

func checkHealthz(ctx context.Context, s *Suite) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/healthz"})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK || !bytes.Contains(resp.Body, []byte(`"ok"`)) {
		return fmt.Errorf("GET /healthz: %d %s, want 200 with status ok", resp.Status, snippet(resp.Body))
	}
	return nil
}

func checkReadyz(ctx context.Context, s *Suite) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/readyz"})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("GET /readyz: %d %s, want 200", resp.Status, snippet(resp.Body))
	}
	return nil
}

func checkMetrics(ctx context.Context, s *Suite) error {
	// One request first, so that the counter has a sample to show.
	if _, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/healthz"}); err != nil {
		return err
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/metrics"})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("GET /metrics: %d", resp.Status)
	}
	want := `strata_http_requests_total{method="GET",route="/healthz",status="200"}`
	if !bytes.Contains(resp.Body, []byte(want)) {
		return fmt.Errorf("GET /metrics does not show %s", want)
	}
	if !bytes.Contains(resp.Body, []byte("strata_http_request_duration_seconds_bucket")) {
		return errors.New("GET /metrics has no latency histogram")
	}
	return nil
}

func checkOpenAPIDocument(ctx context.Context, s *Suite) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/openapi.yaml"})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("GET /openapi.yaml: %d", resp.Status)
	}
	loader := openapi3.NewLoader()
	served, err := loader.LoadFromData(resp.Body)
	if err != nil {
		return fmt.Errorf("served document does not load: %w", err)
	}
	if err := served.Validate(ctx); err != nil {
		return fmt.Errorf("served document does not validate: %w", err)
	}
	if served.Info.Version != s.doc.Info.Version || served.Paths.Len() != s.doc.Paths.Len() {
		return fmt.Errorf("served document is version %s with %d paths; the suite's is %s with %d",
			served.Info.Version, served.Paths.Len(), s.doc.Info.Version, s.doc.Paths.Len())
	}
	return nil
}

func checkRequestID(ctx context.Context, s *Suite) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/healthz"})
	if err != nil {
		return err
	}
	if resp.Header.Get("X-Request-Id") == "" {
		return errors.New("no X-Request-Id in the response")
	}
	const mine = "conformance-request-id-1"
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/healthz", Header: http.Header{"X-Request-Id": {mine}}})
	if err != nil {
		return err
	}
	if got := resp.Header.Get("X-Request-Id"); got != mine {
		return fmt.Errorf("X-Request-Id %q, want the client's %q echoed", got, mine)
	}
	return nil
}

func checkUnknownRoute(ctx context.Context, s *Suite) error {
	for _, path := range []string{"/no/such/route", "/api/data-platform/nothing", "/api/auth/v2/token"} {
		resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: path})
		if err != nil {
			return err
		}
		if err := resp.ExpectError(http.StatusNotFound, "not_found"); err != nil {
			return fmt.Errorf("GET %s: %w", path, err)
		}
	}
	return nil
}

func checkWrongMethod(ctx context.Context, s *Suite) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodDelete, Path: "/healthz"})
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusMethodNotAllowed, "method_not_allowed"); err != nil {
		return fmt.Errorf("DELETE /healthz: %w", err)
	}
	if allow := resp.Header.Get("Allow"); !strings.Contains(allow, http.MethodGet) {
		return fmt.Errorf("DELETE /healthz: Allow %q, want it to list GET", allow)
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodPut, Path: "/api/data-platform/query"})
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusMethodNotAllowed, "method_not_allowed"); err != nil {
		return fmt.Errorf("PUT /api/data-platform/query: %w", err)
	}
	return nil
}

// tokenPath is an unauthenticated JSON operation, so that size and
// content-type checks are reached without credentials.
const tokenPath = "/api/auth/v1/token?grant_type=password"

func checkBodyTooLarge(ctx context.Context, s *Suite) error {
	big := append([]byte(`{"email":"`), bytes.Repeat([]byte("a"), 1<<20)...)
	big = append(big, `"}`...)
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: tokenPath, Body: big, ContentType: "application/json"})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusRequestEntityTooLarge, "payload_too_large")
}

func checkWrongContentType(ctx context.Context, s *Suite) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: tokenPath,
		Body: []byte(`{"email":"a@example.com","password":"x"}`), ContentType: "text/plain"})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusUnsupportedMediaType, "unsupported_media_type")
}

func checkValidationError(ctx context.Context, s *Suite) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: tokenPath,
		Body: []byte(`{"email":5,"password":"x"}`), ContentType: "application/json"})
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusBadRequest, "validation_error"); err != nil {
		return err
	}
	e, _ := resp.ErrorBody()
	if !strings.Contains(e.Message, "email") {
		return fmt.Errorf("validation message %q does not name the field email", e.Message)
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodPost, Path: tokenPath,
		Body: []byte(`{"email":`), ContentType: "application/json"})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusBadRequest, "validation_error")
}

// checkEveryOperation calls every operation of the document without
// credentials or body, with well-formed path and required query parameters.
// Each must answer a documented status in its documented shape, never a 5xx
// (but 503 from a store that is down).
func checkEveryOperation(ctx context.Context, s *Suite) error {
	var problems []string
	for path, item := range s.doc.Paths.Map() {
		for method, op := range item.Operations() {
			target, err := samplePath(path, item, op)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", op.OperationID, err))
				continue
			}
			resp, err := s.Do(ctx, Request{Method: method, Path: target})
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s: %v", op.OperationID, err))
			case resp.Status >= 500 && resp.Status != http.StatusServiceUnavailable:
				problems = append(problems, fmt.Sprintf("%s %s: server error %d: %s", method, target, resp.Status, snippet(resp.Body)))
			}
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// samplePath fills the path template and required query parameters of op
// with valid values of their schemas.
func samplePath(template string, item *openapi3.PathItem, op *openapi3.Operation) (string, error) {
	params := append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...)
	path := template
	query := url.Values{}
	for _, ref := range params {
		p := ref.Value
		if p == nil {
			continue
		}
		switch {
		case p.In == openapi3.ParameterInPath:
			v, err := sampleValue(p.Schema)
			if err != nil {
				return "", fmt.Errorf("path parameter %s: %w", p.Name, err)
			}
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(v))
		case p.In == openapi3.ParameterInQuery && p.Required:
			v, err := sampleValue(p.Schema)
			if err != nil {
				return "", fmt.Errorf("query parameter %s: %w", p.Name, err)
			}
			query.Set(p.Name, v)
		}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return path, nil
}

func sampleValue(ref *openapi3.SchemaRef) (string, error) {
	if ref == nil || ref.Value == nil {
		return "x", nil
	}
	sch := ref.Value
	if len(sch.Enum) > 0 {
		return fmt.Sprint(sch.Enum[0]), nil
	}
	if sch.Default != nil {
		return fmt.Sprint(sch.Default), nil
	}
	if sch.Example != nil {
		return fmt.Sprint(sch.Example), nil
	}
	switch {
	case sch.Format == "uuid":
		return randomUUID(), nil
	case sch.Type.Is("integer"), sch.Type.Is("number"):
		if sch.Min != nil {
			return fmt.Sprint(*sch.Min), nil
		}
		return "1", nil
	case sch.Type.Is("boolean"):
		return "false", nil
	case sch.Pattern == "^[0-9a-f]{32}$":
		var b [16]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:]), nil
	case sch.Type.Is("string"):
		return "conformance", nil
	}
	return "", fmt.Errorf("no sample for schema type %v", sch.Type)
}

func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
