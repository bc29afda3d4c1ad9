package openapi_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stratahq/strata/openapi"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// specOperations are the 15 operations of the service specification.
var specOperations = map[string]string{
	"POST /api/auth/v1/token":                            "token",
	"POST /api/data-platform/query":                      "runQuery",
	"GET /api/data-platform/schema":                      "getSchema",
	"POST /api/data-platform/sync":                       "startSync",
	"GET /api/data-platform/sync/{jobId}":                "getSyncJob",
	"GET /api/data-platform/connectors":                  "listConnectors",
	"POST /api/data-platform/connectors":                 "createConnector",
	"PATCH /api/data-platform/connectors/{connectorId}":  "updateConnector",
	"DELETE /api/data-platform/connectors/{connectorId}": "deleteConnector",
	"GET /api/content":                                   "listContent",
	"GET /api/content/{id}":                              "getContent",
	"POST /api/content/notes":                            "createNote",
	"POST /api/content/voice-notes":                      "uploadVoiceNote",
	"GET /api/content/{id}/related":                      "listRelated",
	"GET /api/content/search":                            "searchContent",
}

func TestDocumentHasEverySpecOperation(t *testing.T) {
	t.Parallel()
	doc := load(t)
	for key, wantID := range specOperations {
		method, path, _ := strings.Cut(key, " ")
		item := doc.Paths.Value(path)
		if item == nil {
			t.Errorf("%s: path missing", key)
			continue
		}
		op := item.GetOperation(method)
		if op == nil {
			t.Errorf("%s: operation missing", key)
			continue
		}
		if op.OperationID != wantID {
			t.Errorf("%s: operationId %q, want %q", key, op.OperationID, wantID)
		}
		if op.Extensions["x-strata-extension"] != nil {
			t.Errorf("%s is in the spec but marked x-strata-extension", key)
		}
	}
}

func TestEveryOperationIsComplete(t *testing.T) {
	t.Parallel()
	doc := load(t)
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s: missing or duplicate operationId %q", key, op.OperationID)
			}
			ids[op.OperationID] = true
			if op.Summary == "" && op.Description == "" {
				t.Errorf("%s: no summary or description", key)
			}
			if len(op.Tags) == 0 {
				t.Errorf("%s: no tag", key)
			}
			if _, inSpec := specOperations[key]; !inSpec && !isOps(path) && op.Extensions["x-strata-extension"] != true {
				t.Errorf("%s: not in the spec, so it must be marked x-strata-extension: true", key)
			}
			if op.Responses.Value("500") == nil {
				t.Errorf("%s: no 500 response", key)
			}
			for code, ref := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil {
					t.Errorf("%s: response %q is not a status code", key, code)
					continue
				}
				if status < 400 {
					continue
				}
				checkErrorResponse(t, key, code, ref)
			}
			if strings.HasPrefix(path, "/api/data-platform/") {
				checkTenantHeader(t, key, op)
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				if _, isJSON := op.RequestBody.Value.Content["application/json"]; isJSON {
					for _, code := range []string{"400", "413", "415"} {
						if op.Responses.Value(code) == nil {
							t.Errorf("%s takes JSON but does not document %s", key, code)
						}
					}
				}
			}
		}
	}
}

// isOps reports paths that are neither spec operations nor extensions: the
// operational endpoints, and the WebSocket of spec section 6.
func isOps(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/metrics", "/openapi.yaml", "/api/content/events":
		return true
	}
	return false
}

// checkErrorResponse asserts that an error response is JSON in the shared
// shape: the Error schema or OAuthError, which extends it.
func checkErrorResponse(t *testing.T, key, code string, ref *openapi3.ResponseRef) {
	t.Helper()
	if ref.Value == nil {
		t.Errorf("%s %s: unresolved response", key, code)
		return
	}
	media := ref.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		t.Errorf("%s %s: error response is not application/json", key, code)
		return
	}
	switch media.Schema.Ref {
	case "#/components/schemas/Error", "#/components/schemas/OAuthError":
	default:
		t.Errorf("%s %s: error schema %q, want Error or OAuthError", key, code, media.Schema.Ref)
	}
}

func checkTenantHeader(t *testing.T, key string, op *openapi3.Operation) {
	t.Helper()
	for _, p := range op.Parameters {
		if p.Value != nil && p.Value.In == openapi3.ParameterInHeader && http.CanonicalHeaderKey(p.Value.Name) == "X-Tenant-Id" {
			if p.Value.Required {
				t.Errorf("%s: X-Tenant-Id must be optional in the document (DECISIONS: the server answers 403, not the validator 400)", key)
			}
			return
		}
	}
	t.Errorf("%s: no X-Tenant-Id header parameter", key)
}

func TestErrorSchemaIsTheSharedShape(t *testing.T) {
	t.Parallel()
	doc := load(t)
	for _, name := range []string{"Error", "OAuthError"} {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Fatalf("components.schemas.%s missing", name)
		}
		for _, field := range []string{"statusCode", "error", "message"} {
			if s.Value.Properties[field] == nil || !slices.Contains(s.Value.Required, field) {
				t.Errorf("%s.%s must be a required property", name, field)
			}
		}
	}
	// The limits of the spec are in the schemas, so the validator enforces them.
	q := doc.Components.Schemas["QueryRequest"].Value
	if q.Properties["maxRows"].Value.Max == nil || *q.Properties["maxRows"].Value.Max != 100000 ||
		q.Properties["timeoutSeconds"].Value.Max == nil || *q.Properties["timeoutSeconds"].Value.Max != 60 {
		t.Error("QueryRequest maxRows/timeoutSeconds bounds are not 100000/60")
	}
}
