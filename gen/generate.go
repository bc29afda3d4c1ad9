// Package gen holds code generated from openapi/openapi.yaml. Run `make generate`;
// never edit the generated files by hand.
package gen

//go:generate go tool oapi-codegen -config ../openapi/server.cfg.yaml ../openapi/openapi.yaml
//go:generate go tool oapi-codegen -config ../openapi/client.cfg.yaml ../openapi/openapi.yaml
