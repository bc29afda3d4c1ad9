package hostedbackend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// openAPIDoc is the part of PostgREST's root OpenAPI (Swagger 2.0) document
// the connector uses.
type openAPIDoc struct {
	Swagger     string                                `json:"swagger"`
	OpenAPI     string                                `json:"openapi"`
	Paths       map[string]map[string]json.RawMessage `json:"paths"`
	Definitions map[string]json.RawMessage            `json:"definitions"`
}

// definition is one definitions.<name> entry.
type definition struct {
	Properties json.RawMessage `json:"properties"`
	Required   []string        `json:"required"`
}

// property is one column of a definition.
type property struct {
	Format      string `json:"format"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// column is a parsed property, in document order.
type column struct {
	name string
	prop property
}

func parseOpenAPI(r io.Reader) (*openAPIDoc, error) {
	var doc openAPIDoc
	br := &bodyReader{r: r}
	dec := json.NewDecoder(br)
	if err := dec.Decode(&doc); err != nil {
		if br.err != nil {
			return nil, &errBodyRead{err: br.err}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &errBodyRead{err: err}
		}
		return nil, fmt.Errorf("the response is not PostgREST's OpenAPI document: %w", err)
	}
	if doc.Swagger == "" && doc.OpenAPI == "" {
		return nil, errors.New("the response is not an OpenAPI document (no swagger field)")
	}
	if doc.Paths == nil && doc.Definitions == nil {
		return nil, errors.New("the OpenAPI document has neither paths nor definitions")
	}
	return &doc, nil
}

// orderedProperties decodes a properties object keeping the document order,
// which is the table's column order.
func orderedProperties(raw json.RawMessage) ([]column, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("properties is not an object")
	}
	var cols []column
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var p property
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		cols = append(cols, column{name: name, prop: p})
	}
	return cols, nil
}

// tablesFromDoc turns the document into tables: every definition that is
// readable with GET /<name>. Function results (/rpc/*, and the
// "(rpc) name" definitions of old PostgREST versions) are skipped.
func tablesFromDoc(doc *openAPIDoc) ([]Table, error) {
	names := make([]string, 0, len(doc.Definitions))
	for name := range doc.Definitions {
		names = append(names, name)
	}
	sort.Strings(names)
	var tables []Table
	for _, name := range names {
		if strings.HasPrefix(name, "(rpc) ") || strings.HasPrefix(name, "rpc/") {
			continue
		}
		if doc.Paths != nil {
			ops, ok := doc.Paths["/"+name]
			if !ok {
				continue
			}
			if _, ok := ops["get"]; !ok {
				continue
			}
		}
		var def definition
		if err := json.Unmarshal(doc.Definitions[name], &def); err != nil {
			return nil, fmt.Errorf("%w: definition %q: %w", ErrProtocol, name, err)
		}
		cols, err := orderedProperties(def.Properties)
		if err != nil {
			return nil, fmt.Errorf("%w: definition %q: %w", ErrProtocol, name, err)
		}
		if len(cols) == 0 {
			continue
		}
		required := make(map[string]bool, len(def.Required))
		for _, r := range def.Required {
			required[r] = true
		}
		fields := make([]arrow.Field, 0, len(cols))
		var pk []string
		for _, c := range cols {
			format := c.prop.Format
			if format == "" {
				// Without a format only the JSON type is known.
				switch c.prop.Type {
				case "integer":
					format = "bigint"
				case "number":
					format = "numeric"
				case "boolean":
					format = "boolean"
				case "string":
					format = "text"
				default:
					format = "json"
				}
			}
			fields = append(fields, FieldForFormat(c.name, format, !required[c.name]))
			if strings.Contains(c.prop.Description, "<pk/>") {
				pk = append(pk, c.name)
			}
		}
		tables = append(tables, Table{
			Name:          name,
			Schema:        arrow.NewSchema(fields, nil),
			PrimaryKey:    pk,
			EstimatedRows: -1,
		})
	}
	return tables, nil
}
