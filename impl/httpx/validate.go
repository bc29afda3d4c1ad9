package httpx

import (
	"errors"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
)

// Validate checks the request against its OpenAPI operation: a body of a
// content type the operation does not take is 415 unsupported_media_type;
// bad parameters and bodies are 400 validation_error with a message naming
// the field. Authentication is not checked here (it has its own middleware,
// which runs earlier). Multipart bodies are not validated here, so that
// uploads stream to storage instead of being buffered; their handlers check
// them.
func Validate(logger *slog.Logger) Middleware {
	opts := &openapi3filter.Options{
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		// Ids are checked here, with a message naming the field, rather
		// than by the generated code's decoding, whose errors name none.
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.WithStringFormatValidator("uuid", openapi3.NewCallbackValidator(func(s string) error {
				if _, err := uuid.Parse(s); err != nil {
					return errors.New("must be a UUID")
				}
				return nil
			})),
		},
	}
	uploadOpts := *opts
	uploadOpts.ExcludeRequestBody = true
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route, params := RouteFrom(r.Context())
			if route == nil {
				next.ServeHTTP(w, r)
				return
			}
			options := opts
			if body := route.Operation.RequestBody; body != nil && body.Value != nil {
				mediaType, err := checkContentType(r, body.Value)
				if err != nil {
					apierrors.Write(w, r, logger, err)
					return
				}
				if strings.HasPrefix(mediaType, "multipart/") {
					options = &uploadOpts
				}
			}
			// Before the schema validation, which rewrites the body when it
			// fills in defaults (and so drops what follows the JSON value).
			if options != &uploadOpts && route.Operation.RequestBody != nil {
				if err := checkJSONText(r); err != nil {
					apierrors.Write(w, r, logger, err)
					return
				}
			}
			err := openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
				Request:    r,
				PathParams: params,
				Route:      route,
				Options:    options,
			})
			if err != nil {
				apierrors.Write(w, r, logger, requestValidationError(err))
				return
			}
			for name, values := range r.URL.Query() {
				for _, v := range values {
					if strings.IndexByte(v, 0) >= 0 {
						apierrors.Write(w, r, logger, apierrors.Validation("invalid query parameter %q: text must not contain NUL characters", name))
						return
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// hasBody reports whether the request carries a body.
func hasBody(r *http.Request) bool {
	return r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody)
}

// checkContentType returns the request's media type, or 415 when a body of a
// type the operation does not take is sent, or 400 when a required body is
// missing.
func checkContentType(r *http.Request, body *openapi3.RequestBody) (string, error) {
	if !hasBody(r) {
		if body.Required {
			return "", apierrors.Validation("request body is required")
		}
		return "", nil
	}
	header := r.Header.Get("Content-Type")
	if header == "" {
		return "", apierrors.UnsupportedMediaType("Content-Type is missing; this operation takes %s", acceptedTypes(body))
	}
	mediaType, _, err := mime.ParseMediaType(header)
	if err != nil {
		return "", apierrors.UnsupportedMediaType("Content-Type %q is malformed; this operation takes %s", header, acceptedTypes(body))
	}
	if _, ok := body.Content[mediaType]; !ok {
		return "", apierrors.UnsupportedMediaType("Content-Type %s is not supported; this operation takes %s", mediaType, acceptedTypes(body))
	}
	return mediaType, nil
}

func acceptedTypes(body *openapi3.RequestBody) string {
	// Map order is random; sort for a stable message.
	return strings.Join(slices.Sorted(maps.Keys(body.Content)), " or ")
}

// requestValidationError maps a kin-openapi validation failure to a 400
// validation_error whose message names the parameter or body field. Values
// are never echoed (they may be secrets).
func requestValidationError(err error) error {
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) {
		return apierrors.PayloadTooLarge(maxBytes.Limit)
	}
	var reqErr *openapi3filter.RequestError
	if !errors.As(err, &reqErr) {
		return apierrors.Validation("invalid request")
	}
	reason := describeCause(reqErr)
	switch {
	case reqErr.Parameter != nil:
		return apierrors.Validation("invalid %s parameter %q: %s", reqErr.Parameter.In, reqErr.Parameter.Name, reason)
	case reqErr.RequestBody != nil:
		var schemaErr *openapi3.SchemaError
		if errors.As(reqErr.Err, &schemaErr) {
			if field := strings.Join(schemaErr.JSONPointer(), "."); field != "" {
				return apierrors.Validation("invalid request body: field %q: %s", field, reason)
			}
		}
		return apierrors.Validation("invalid request body: %s", reason)
	default:
		return apierrors.Validation("invalid request: %s", reason)
	}
}

// describeCause returns the most specific human-readable reason inside a
// RequestError without the schema dumps kin-openapi appends to Error().
func describeCause(reqErr *openapi3filter.RequestError) string {
	var schemaErr *openapi3.SchemaError
	if errors.As(reqErr.Err, &schemaErr) && schemaErr.SchemaField == "format" && schemaErr.Schema != nil {
		// kin-openapi's reason quotes the format's regular expression.
		return formatReason(schemaErr.Schema.Format)
	}
	if errors.As(reqErr.Err, &schemaErr) && schemaErr.Reason != "" {
		return schemaErr.Reason
	}
	var parseErr *openapi3filter.ParseError
	if errors.As(reqErr.Err, &parseErr) {
		if parseErr.Reason != "" {
			return parseErr.Reason
		}
		if parseErr.Cause != nil {
			return parseErr.Cause.Error()
		}
	}
	if reqErr.Err != nil && !errors.As(reqErr.Err, &schemaErr) {
		return firstLine(reqErr.Err.Error())
	}
	if reqErr.Reason != "" {
		return reqErr.Reason
	}
	return "does not match the schema"
}

// formatReason says what a value of an OpenAPI string format looks like.
func formatReason(format string) string {
	switch format {
	case "uuid":
		return "must be a UUID"
	case "date-time":
		return "must be an RFC 3339 date-time, e.g. 2026-12-31T23:59:59Z"
	case "date":
		return "must be a date, e.g. 2026-12-31"
	case "email":
		return "must be an email address"
	default:
		return "must be a valid " + format
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
