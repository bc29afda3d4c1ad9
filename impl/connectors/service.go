// Package connectors manages a tenant's data-source connectors: the types
// available (installed plugins and the spec's announced types), creation
// with validation against the type's JSON Schema, RFC 7386 merge-patch
// updates, secrets sealed at rest and masked in every response (and sent
// only where they were entered for: see boundPaths), and deletion (tables
// stay in the tenant store).
package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/store"
)

// Masked is how a secret appears in responses; sent back in a PATCH it
// keeps the stored secret, and on create it is refused.
const Masked = "********"

// Service implements connector management.
type Service struct {
	store   store.ConnectorStore
	catalog Catalog
	sealer  *Sealer
	now     func() time.Time

	mu      sync.Mutex
	schemas map[string]*compiledSchema // by type and schema text
}

// NewService returns the service.
func NewService(st store.ConnectorStore, catalog Catalog, sealer *Sealer, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, catalog: catalog, sealer: sealer, now: now, schemas: map[string]*compiledSchema{}}
}

// Types lists the connector types.
func (s *Service) Types(ctx context.Context) ([]TypeEntry, error) {
	return ListTypes(ctx, s.catalog)
}

var errUnavailable = func(typ string) error {
	return apierrors.New(http.StatusUnprocessableEntity, apierrors.CodeConnectorTypeUnavailable,
		"connector type %s is coming soon: no plugin for it is installed", typ)
}

// typeSchema returns the compiled schema of an installed type, 422 for an
// announced type without a plugin and 400 for an unknown type.
func (s *Service) typeSchema(ctx context.Context, typ string) (*compiledSchema, error) {
	types, err := s.catalog.Types(ctx)
	if err != nil {
		return nil, fmt.Errorf("connector types: %w", err)
	}
	for _, t := range types {
		if t.Type == typ {
			return s.compile(t)
		}
	}
	if isAnnounced(typ) {
		return nil, errUnavailable(typ)
	}
	return nil, apierrors.Validation("field \"type\": unknown connector type %q", typ)
}

func (s *Service) compile(t TypeInfo) (*compiledSchema, error) {
	key := t.Type + "\x00" + string(t.ConfigSchema)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.schemas[key]; ok {
		return c, nil
	}
	c, err := compileSchema(t)
	if err != nil {
		return nil, err
	}
	s.schemas[key] = c
	return c, nil
}

func binding(id uuid.UUID, path []string) string { return id.String() + "/" + strings.Join(path, "/") }

// walk returns the parent object and key of path in config, creating nothing.
func lookup(config map[string]any, path []string) (map[string]any, string, bool) {
	cur := config
	for i, k := range path {
		if i == len(path)-1 {
			_, ok := cur[k]
			return cur, k, ok
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, "", false
		}
		cur = next
	}
	return nil, "", false
}

// seal replaces the secret values of config (plain) with sealed ones.
func (s *Service) seal(id uuid.UUID, c *compiledSchema, config map[string]any) error {
	for _, path := range c.secrets {
		parent, key, ok := lookup(config, path)
		if !ok {
			continue
		}
		if v, isString := parent[key].(string); isString {
			sealed, err := s.sealer.Seal(v, binding(id, path))
			if err != nil {
				return err
			}
			parent[key] = sealed
		}
	}
	return nil
}

// unsealAll opens every sealed value of a stored config.
func (s *Service) unsealAll(id uuid.UUID, config map[string]any, prefix []string) error {
	for k, v := range config {
		path := append(append([]string{}, prefix...), k)
		switch t := v.(type) {
		case string:
			if IsSealed(t) {
				plain, err := s.sealer.Open(t, binding(id, path))
				if err != nil {
					return fmt.Errorf("connector %s field %s: %w", id, strings.Join(path, "."), err)
				}
				config[k] = plain
			}
		case map[string]any:
			if err := s.unsealAll(id, t, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// maskAll replaces every sealed value with Masked, and the password of a
// URL with credentials with "xxxxx" (such URLs are refused since, but may
// have been stored before).
func maskAll(config map[string]any) {
	for k, v := range config {
		switch t := v.(type) {
		case string:
			if IsSealed(t) {
				config[k] = Masked
			} else if strings.Contains(t, "@") {
				if u, err := url.Parse(t); err == nil && u.User != nil {
					config[k] = u.Redacted()
				}
			}
		case map[string]any:
			maskAll(t)
		}
	}
}

func decodeConfig(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("stored config: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// MaskedConfig is a connector's config as responses show it.
func MaskedConfig(c store.Connector) (map[string]any, error) {
	m, err := decodeConfig(c.Config)
	if err != nil {
		return nil, err
	}
	maskAll(m)
	return m, nil
}

// PlainConfig is a connector's config with its secrets opened, for the
// plugin; it must never be logged or returned.
func (s *Service) PlainConfig(c store.Connector) (json.RawMessage, error) {
	m, err := decodeConfig(c.Config)
	if err != nil {
		return nil, err
	}
	if err := s.unsealAll(c.ID, m, nil); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// CreateInput is a new connector.
type CreateInput struct {
	Name    string
	Type    string
	Config  map[string]any
	Enabled *bool
}

// Create validates and stores a connector.
func (s *Service) Create(ctx context.Context, tenantID uuid.UUID, in CreateInput) (store.Connector, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return store.Connector{}, apierrors.Validation("field \"name\": must not be empty")
	}
	schema, err := s.typeSchema(ctx, in.Type)
	if err != nil {
		return store.Connector{}, err
	}
	config := in.Config
	if config == nil {
		config = map[string]any{}
	}
	// The placeholder stands for a stored secret; a new connector has none.
	for _, path := range schema.secrets {
		if v, ok := valueAt(config, path); ok && v == Masked {
			return store.Connector{}, apierrors.Validation("field %q: %q is how responses show a stored secret; "+
				"a new connector has no stored secret to keep: send the secret itself", "config."+strings.Join(path, "."), Masked)
		}
	}
	schema.applyDefaults(config)
	if err := schema.validate(config); err != nil {
		return store.Connector{}, err
	}
	now := s.now()
	c := store.Connector{ID: uuid.New(), TenantID: tenantID, Name: name, Type: in.Type, Enabled: in.Enabled == nil || *in.Enabled,
		CreatedAt: now, UpdatedAt: now}
	if err := s.seal(c.ID, schema, config); err != nil {
		return store.Connector{}, err
	}
	if c.Config, err = json.Marshal(config); err != nil {
		return store.Connector{}, err
	}
	if err := s.store.CreateConnector(ctx, c); err != nil {
		return store.Connector{}, err
	}
	return c, nil
}

// List returns the tenant's connectors, oldest first.
func (s *Service) List(ctx context.Context, tenantID uuid.UUID) ([]store.Connector, error) {
	return s.store.ListConnectors(ctx, tenantID)
}

func notFound(id string) error {
	return apierrors.New(http.StatusNotFound, apierrors.CodeConnectorNotFound, "connector %s not found", id)
}

// ParseID parses a connector id; anything that is not one is unknown (404).
func ParseID(raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, notFound(raw)
	}
	return id, nil
}

// UpdateInput is a PATCH: nil fields keep their values; Config is a merge patch.
type UpdateInput struct {
	Name    *string
	Enabled *bool
	Config  map[string]any
}

// Update applies a PATCH. updatedAt changes only when something changed.
// A secret sent back as Masked keeps the stored secret.
func (s *Service) Update(ctx context.Context, tenantID, id uuid.UUID, in UpdateInput) (store.Connector, error) {
	if in.Name != nil && strings.TrimSpace(*in.Name) == "" {
		return store.Connector{}, apierrors.Validation("field \"name\": must not be empty")
	}
	c, err := s.store.UpdateConnector(ctx, tenantID, id, func(c *store.Connector) (bool, error) {
		changed := false
		if in.Name != nil && strings.TrimSpace(*in.Name) != c.Name {
			c.Name, changed = strings.TrimSpace(*in.Name), true
		}
		if in.Enabled != nil && *in.Enabled != c.Enabled {
			c.Enabled, changed = *in.Enabled, true
		}
		if in.Config != nil {
			configChanged, err := s.patchConfig(ctx, c, in.Config)
			if err != nil {
				return false, err
			}
			changed = changed || configChanged
		}
		if changed {
			c.UpdatedAt = s.now()
		}
		return changed, nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return c, notFound(id.String())
	}
	return c, err
}

// patchConfig merges patch into c's config, validates and reseals it, and
// reports whether the plain config changed.
func (s *Service) patchConfig(ctx context.Context, c *store.Connector, patch map[string]any) (bool, error) {
	schema, err := s.typeSchema(ctx, c.Type)
	if err != nil {
		return false, err
	}
	current, err := decodeConfig(c.Config)
	if err != nil {
		return false, err
	}
	if err := s.unsealAll(c.ID, current, nil); err != nil {
		return false, err
	}
	resent := schema.secretsInClear(patch)
	dropMasked(patch)
	merged, _ := mergePatch(current, patch).(map[string]any)
	if merged == nil {
		merged = map[string]any{}
	}
	// A member set to null goes back to its default, as on create.
	schema.applyDefaults(merged)
	if err := schema.validate(merged); err != nil {
		return false, err
	}
	if err := schema.checkSecretsResent(current, merged, resent); err != nil {
		return false, err
	}
	if reflect.DeepEqual(normalize(merged), normalize(current)) {
		return false, nil
	}
	if err := s.seal(c.ID, schema, merged); err != nil {
		return false, err
	}
	c.Config, err = json.Marshal(merged)
	return true, err
}

// secretsInClear reports, for each secret path of the schema, whether the
// patch sets it to a new value (anything but Masked and null).
func (c *compiledSchema) secretsInClear(patch map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, path := range c.secrets {
		if parent, key, ok := lookup(patch, path); ok && parent[key] != nil && parent[key] != Masked {
			out[strings.Join(path, ".")] = true
		}
	}
	return out
}

// checkSecretsResent enforces the rule of secret-bound properties (see
// boundPaths): when a PATCH changes one, every secret the merged config
// holds must have been sent in clear in that PATCH, not kept (Masked or
// omitted). Otherwise anyone allowed to edit the connector could point it
// at their own host and receive the stored secrets with the next sync.
func (c *compiledSchema) checkSecretsResent(current, merged map[string]any, resent map[string]bool) error {
	var moved []string
	for _, path := range c.bound {
		before, _ := valueAt(current, path)
		after, _ := valueAt(merged, path)
		if !reflect.DeepEqual(normalizeValue(before), normalizeValue(after)) {
			moved = append(moved, "config."+strings.Join(path, "."))
		}
	}
	if len(moved) == 0 {
		return nil
	}
	var kept []string
	for _, path := range c.secrets {
		if _, ok := valueAt(merged, path); ok && !resent[strings.Join(path, ".")] {
			kept = append(kept, strconv.Quote("config."+strings.Join(path, ".")))
		}
	}
	if len(kept) == 0 {
		return nil
	}
	slices.Sort(kept)
	slices.Sort(moved)
	noun := "field"
	if len(kept) > 1 {
		noun = "fields"
	}
	return apierrors.Validation("%s %s: must be sent again in clear (not %q or omitted) when %s changes: "+
		"a stored secret is only ever sent to the address it was entered with", noun, strings.Join(kept, ", "), Masked, strings.Join(moved, " or "))
}

// valueAt returns the value at path in config.
func valueAt(config map[string]any, path []string) (any, bool) {
	parent, key, ok := lookup(config, path)
	if !ok {
		return nil, false
	}
	return parent[key], true
}

// dropMasked removes values equal to Masked from a patch: "keep the secret".
func dropMasked(patch map[string]any) {
	for k, v := range patch {
		switch t := v.(type) {
		case string:
			if t == Masked {
				delete(patch, k)
			}
		case map[string]any:
			dropMasked(t)
		}
	}
}

// normalize round-trips through JSON so numbers compare equal however they
// were decoded.
func normalize(m map[string]any) any { return normalizeValue(m) }

func normalizeValue(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

// Delete removes a connector; its tables stay in the tenant store.
func (s *Service) Delete(ctx context.Context, tenantID, id uuid.UUID) error {
	err := s.store.DeleteConnector(ctx, tenantID, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound(id.String())
	}
	return err
}
