package connectors

import (
	"context"
	"encoding/json"
	"slices"
)

// TypeInfo is an installed connector type (a plugin in the plugin dir).
type TypeInfo struct {
	Type         string
	DisplayName  string
	ConfigSchema json.RawMessage
}

// Catalog lists the installed connector types.
type Catalog interface {
	Types(ctx context.Context) ([]TypeInfo, error)
}

// announced are the types of spec section 2.7 with neutral names: available
// exactly when their plugin is installed, "coming soon" otherwise.
var announced = []struct{ Type, Name, Description string }{
	{"hosted_backend", "Hosted backend", "Hosted backend exposing a REST data API (PostgREST)"},
	{"relational_pg", "Relational database (first kind)", "Direct connection to a relational database"},
	{"relational_my", "Relational database (second kind)", "Direct connection to a relational database"},
	{"cloud_warehouse_1", "Cloud data warehouse (first kind)", "Cloud data warehouse"},
	{"cloud_warehouse_2", "Cloud data warehouse (second kind)", "Cloud data warehouse"},
	{"csv", "CSV file upload", "CSV file upload"},
	{"api", "Generic REST API", "Generic REST API"},
}

// TypeEntry is one line of GET /connector-types.
type TypeEntry struct {
	Type         string
	Name         string
	Description  string
	Available    bool
	ConfigSchema json.RawMessage
}

// emptySchema is what a type without a plugin advertises.
var emptySchema = json.RawMessage(`{"type":"object"}`)

// ListTypes merges the announced types with the installed ones: announced
// types first in the spec's order, then other installed (third-party) types
// by name.
func ListTypes(ctx context.Context, c Catalog) ([]TypeEntry, error) {
	installed, err := c.Types(ctx)
	if err != nil {
		return nil, err
	}
	byType := map[string]TypeInfo{}
	for _, t := range installed {
		byType[t.Type] = t
	}
	var out []TypeEntry
	for _, a := range announced {
		e := TypeEntry{Type: a.Type, Name: a.Name, Description: a.Description, ConfigSchema: emptySchema}
		if t, ok := byType[a.Type]; ok {
			e.Available, e.ConfigSchema = true, t.ConfigSchema
			delete(byType, a.Type)
		}
		out = append(out, e)
	}
	var extra []TypeEntry
	for _, t := range byType {
		name := t.DisplayName
		if name == "" {
			name = t.Type
		}
		extra = append(extra, TypeEntry{Type: t.Type, Name: name, Available: true, ConfigSchema: t.ConfigSchema})
	}
	slices.SortFunc(extra, func(a, b TypeEntry) int {
		if a.Type < b.Type {
			return -1
		}
		if a.Type > b.Type {
			return 1
		}
		return 0
	})
	return append(out, extra...), nil
}

// isAnnounced reports a type of spec 2.7.
func isAnnounced(typ string) bool {
	for _, a := range announced {
		if a.Type == typ {
			return true
		}
	}
	return false
}
