package connectors

import (
	"fmt"
	"strings"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/query"
)

// Strata's own config properties: read by Strata from every connector's
// config, whatever its type, when the type's schema allows them.
const (
	// PropSyncInterval is the interval of scheduled syncs in seconds.
	PropSyncInterval = "sync_interval_seconds"
	// PropDestinationSchema is the DuckDB schema a connector's tables land
	// in; empty or "main" means main.
	PropDestinationSchema = "destination_schema"
)

// reservedSchemas are names a destination_schema cannot take (compared
// without case, as DuckDB compares identifiers): DuckDB's system schemas,
// where nothing can be created; the names of DuckDB's built-in catalogs and
// of the tenant database's own catalog ("warehouse", after its file), which
// make a schema of that name ambiguous ("Ambiguous reference to catalog or
// schema"); and the engine's bookkeeping schema. Names starting with
// "__strata" are reserved for staging tables and views.
var reservedSchemas = []string{"information_schema", "pg_catalog", "temp", "system", "warehouse", query.InternalSchema}

// CheckDestinationSchema reports why name cannot be a destination_schema,
// or nil. The sync runner checks stored configs with it too.
func CheckDestinationSchema(name string) error {
	if name == "" || strings.EqualFold(name, "main") {
		return nil
	}
	for _, r := range reservedSchemas {
		if strings.EqualFold(name, r) {
			return fmt.Errorf("%s is reserved by the store", r)
		}
	}
	if strings.HasPrefix(strings.ToLower(name), "__strata") {
		return fmt.Errorf("names starting with __strata are reserved by the store")
	}
	if len(name) > 120 {
		return fmt.Errorf("must be at most 120 characters long")
	}
	for _, c := range name {
		if c < 0x20 || c == '"' || c == 0x7f {
			return fmt.Errorf("must not contain double quotes or control characters")
		}
	}
	return nil
}

// checkStrataProperties applies Strata's rules for its own properties, which
// hold for every connector type on top of the type's schema.
func checkStrataProperties(config map[string]any) error {
	if s, ok := config[PropDestinationSchema].(string); ok {
		if err := CheckDestinationSchema(s); err != nil {
			return apierrors.Validation("field %q: %v", "config."+PropDestinationSchema, err)
		}
	}
	return nil
}
