package postgrestfixture

import (
	"bytes"
	"encoding/json"
	"strings"
)

// obj is a JSON object that keeps its key order (PostgREST's document lists
// columns in table order, and clients rely on it).
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes the members in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// PostgRESTVersion is the PostgREST version the fixture's document claims.
const PostgRESTVersion = "12.2.3"

// swaggerType is PostgREST's toSwaggerType: json/jsonb have no type.
func swaggerType(dataType string) (string, bool) {
	switch dataType {
	case "character varying", "character", "text":
		return "string", true
	case "boolean":
		return "boolean", true
	case "smallint", "integer", "bigint":
		return "integer", true
	case "numeric", "real", "double precision":
		return "number", true
	case "json", "jsonb":
		return "", false
	}
	if strings.HasSuffix(dataType, "[]") {
		return "array", true
	}
	return "string", true
}

// openAPIDocument builds the root document the way PostgREST does for one
// exposed schema (Swagger 2.0).
func openAPIDocument(host, schema string, rels []*relation, fns []function) obj {
	definitions := obj{}
	paths := obj{{"/", obj{{"get", obj{
		{"produces", []string{"application/openapi+json", "application/json"}},
		{"responses", obj{{"200", obj{{"description", "OK"}}}}},
		{"summary", "OpenAPI description (this document)"},
		{"tags", []string{"Introspection"}},
	}}}}}
	parameters := obj{
		{"preferParams", preferParam([]string{"params=single-object"})},
		{"preferReturn", preferParam([]string{"return=representation", "return=minimal", "return=none"})},
		{"preferCount", preferParam([]string{"count=none"})},
		{"preferPost", preferParam([]string{"return=representation", "return=minimal", "return=none", "resolution=ignore-duplicates", "resolution=merge-duplicates"})},
		{"select", queryParam("select", "Filtering Columns")},
		{"on_conflict", queryParam("on_conflict", "On Conflict")},
		{"order", queryParam("order", "Ordering")},
		{"range", obj{{"name", "Range"}, {"description", "Limiting and Pagination"}, {"required", false}, {"in", "header"}, {"type", "string"}}},
		{"rangeUnit", obj{{"name", "Range-Unit"}, {"description", "Limiting and Pagination"}, {"required", false}, {"default", "items"}, {"in", "header"}, {"type", "string"}}},
		{"offset", queryParam("offset", "Limiting and Pagination")},
		{"limit", queryParam("limit", "Limiting and Pagination")},
	}
	for _, r := range rels {
		props := obj{}
		var required []string
		var rowFilters []string
		for _, c := range r.columns {
			p := obj{}
			if c.defaultExpr != nil {
				p = append(p, kv{"default", defaultValue(*c.defaultExpr)})
			}
			if d := columnDescription(c); d != nil {
				p = append(p, kv{"description", *d})
			}
			if len(c.enum) > 0 {
				p = append(p, kv{"enum", c.enum})
			}
			p = append(p, kv{"format", c.dataType})
			if c.maxLen != nil {
				p = append(p, kv{"maxLength", *c.maxLen})
			}
			if t, ok := swaggerType(c.dataType); ok {
				p = append(p, kv{"type", t})
				if t == "array" {
					elemType, _ := swaggerType(strings.TrimSuffix(c.dataType, "[]"))
					if elemType == "" {
						elemType = "string"
					}
					p = append(p, kv{"items", obj{{"type", elemType}}})
				}
			}
			props = append(props, kv{c.name, p})
			if c.notNull {
				required = append(required, c.name)
			}
			filter := "rowFilter." + r.name + "." + c.name
			rowFilters = append(rowFilters, filter)
			fp := obj{{"name", c.name}}
			if c.description != nil {
				fp = append(fp, kv{"description", *c.description})
			}
			fp = append(fp, kv{"required", false}, kv{"format", c.dataType}, kv{"in", "query"}, kv{"type", "string"})
			parameters = append(parameters, kv{filter, fp})
		}
		def := obj{}
		if r.description != nil {
			def = append(def, kv{"description", *r.description})
		}
		if len(required) > 0 {
			def = append(def, kv{"required", required})
		}
		def = append(def, kv{"properties", props}, kv{"type", "object"})
		definitions = append(definitions, kv{r.name, def})
		parameters = append(parameters, kv{"body." + r.name, obj{
			{"name", r.name}, {"description", r.name}, {"required", false}, {"in", "body"},
			{"schema", obj{{"$ref", "#/definitions/" + r.name}}},
		}})

		refs := func(names ...string) []obj {
			out := make([]obj, len(names))
			for i, n := range names {
				out[i] = obj{{"$ref", "#/parameters/" + n}}
			}
			return out
		}
		get := obj{
			{"tags", []string{r.name}},
			{"parameters", refs(append(append([]string{}, rowFilters...), "select", "order", "range", "rangeUnit", "offset", "limit", "preferCount")...)},
			{"responses", obj{
				{"200", obj{{"description", "OK"}, {"schema", obj{{"items", obj{{"$ref", "#/definitions/" + r.name}}}, {"type", "array"}}}}},
				{"206", obj{{"description", "Partial Content"}}},
			}},
		}
		item := obj{{"get", get}}
		if r.insertable {
			item = append(item,
				kv{"post", obj{{"tags", []string{r.name}}, {"parameters", refs("body."+r.name, "select", "preferPost")}, {"responses", obj{{"201", obj{{"description", "Created"}}}}}}},
				kv{"delete", obj{{"tags", []string{r.name}}, {"parameters", refs(append(append([]string{}, rowFilters...), "preferReturn")...)}, {"responses", obj{{"204", obj{{"description", "No Content"}}}}}}},
				kv{"patch", obj{{"tags", []string{r.name}}, {"parameters", refs(append(append([]string{}, rowFilters...), "body."+r.name, "preferReturn")...)}, {"responses", obj{{"204", obj{{"description", "No Content"}}}}}}},
			)
		}
		paths = append(paths, kv{"/" + r.name, item})
	}
	for _, f := range fns {
		op := func() obj {
			return obj{
				{"tags", []string{"(rpc) " + f.name}},
				{"produces", []string{"application/json", "application/vnd.pgrst.object+json;nulls=stripped", "application/vnd.pgrst.object+json"}},
				{"parameters", []obj{{{"name", "args"}, {"required", true}, {"in", "body"}, {"schema", obj{{"type", "object"}}}}, {{"$ref", "#/parameters/preferParams"}}}},
				{"responses", obj{{"200", obj{{"description", "OK"}}}}},
			}
		}
		item := obj{}
		if !f.volatile {
			item = append(item, kv{"get", op()})
		}
		item = append(item, kv{"post", op()})
		paths = append(paths, kv{"/rpc/" + f.name, item})
	}
	mimes := []string{"application/json", "application/vnd.pgrst.object+json;nulls=stripped", "application/vnd.pgrst.object+json", "text/csv"}
	return obj{
		{"swagger", "2.0"},
		{"info", obj{{"description", ""}, {"title", "standard public schema"}, {"version", PostgRESTVersion}}},
		{"host", host},
		{"basePath", "/"},
		{"schemes", []string{"http"}},
		{"consumes", mimes},
		{"produces", mimes},
		{"paths", paths},
		{"definitions", definitions},
		{"parameters", parameters},
		{"externalDocs", obj{{"description", "PostgREST Documentation"}, {"url", "https://postgrest.org/en/v12/references/api.html"}}},
	}
}

func preferParam(values []string) obj {
	return obj{{"name", "Prefer"}, {"description", "Preference"}, {"required", false}, {"enum", values}, {"in", "header"}, {"type", "string"}}
}

func queryParam(name, description string) obj {
	return obj{{"name", name}, {"description", description}, {"required", false}, {"in", "query"}, {"type", "string"}}
}

// defaultValue mirrors PostgREST: a default that is valid JSON (after
// stripping a type cast of a quoted literal) is embedded, else its text.
func defaultValue(expr string) any {
	s := expr
	if strings.HasPrefix(s, "'") {
		if i := strings.LastIndex(s, "'::"); i > 0 {
			return strings.ReplaceAll(s[1:i], "''", "'")
		}
	}
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}

// columnDescription is the column comment plus PostgREST's notes marking
// primary and foreign keys.
func columnDescription(c columnInfo) *string {
	notes := []string{"Note:"}
	if c.pk {
		notes = append(notes, "This is a Primary Key.<pk/>")
	}
	if c.fkTable != nil && c.fkColumn != nil {
		notes = append(notes, "This is a Foreign Key to `"+*c.fkTable+"."+*c.fkColumn+"`.<fk table='"+*c.fkTable+"' column='"+*c.fkColumn+"'/>")
	}
	if len(notes) == 1 {
		return c.description
	}
	d := strings.Join(notes, "\n")
	if c.description != nil {
		d = *c.description + "\n\n" + d
	}
	return &d
}
