// Package openapi embeds the contract, openapi/openapi.yaml, so that the
// binary serves it as is at /openapi.yaml and validates requests against the
// very document the code was generated from.
package openapi

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// Spec is the OpenAPI document, byte for byte as committed.
//
//go:embed openapi.yaml
var Spec []byte

// Load parses and validates Spec. The servers list is cleared so that
// routing matches requests whatever host and port they arrive on.
func Load(ctx context.Context) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(Spec)
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("validate openapi.yaml: %w", err)
	}
	doc.Servers = nil
	return doc, nil
}
