package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/stratahq/strata/impl/auth"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/store/sqlite"
)

// adminFlags are the flags every admin command shares.
type adminFlags struct {
	dataDir string
	json    bool
}

func (f *adminFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dataDir, "data-dir", server.Defaults().DataDir, "data directory of the server")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the result as JSON")
}

// withAuth opens the control-plane store of the data dir and an auth
// service over it, runs fn, and closes both.
func withAuth(ctx context.Context, dataDir string, fn func(*auth.Service) error) error {
	st, err := sqlite.Open(ctx, filepath.Join(dataDir, sqlite.FileName))
	if err != nil {
		return err
	}
	defer st.Close()
	// The issuer only matters for issuing tokens, which admin commands do not.
	svc, err := auth.New(ctx, st, auth.Config{Issuer: "strata-admin"}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer svc.Close(ctx)
	return fn(svc)
}

func printResult(w io.Writer, asJSON bool, v any, plain string) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintln(w, plain)
	return err
}

func newTenantsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "tenants", Short: "Administer tenants"}
	var f adminFlags
	var name, tier string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a tenant and print its id",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usageError{errors.New("--name is required")}
			}
			return withAuth(cmd.Context(), f.dataDir, func(svc *auth.Service) error {
				t, err := svc.CreateTenant(cmd.Context(), name, principal.Tier(tier))
				if err != nil {
					return err
				}
				return printResult(cmd.OutOrStdout(), f.json, map[string]any{
					"id": t.ID, "name": t.Name, "tier": t.Tier, "features": t.Features, "createdAt": t.CreatedAt.Format(time.RFC3339),
				}, t.ID.String())
			})
		},
	}
	f.register(create)
	create.Flags().StringVar(&name, "name", "", "tenant name (required)")
	create.Flags().StringVar(&tier, "tier", string(principal.TierFree), "tier: free or pro")

	var sf adminFlags
	var tenant, feature string
	var enabled bool
	setFeature := &cobra.Command{
		Use:   "set-feature",
		Short: "Turn a tenant's feature flag on or off (e.g. --feature content_search --enabled=false)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := uuid.Parse(tenant)
			if err != nil {
				return usageError{fmt.Errorf("--tenant %q: not a tenant id", tenant)}
			}
			return withAuth(cmd.Context(), sf.dataDir, func(svc *auth.Service) error {
				if err := svc.SetTenantFeature(cmd.Context(), id, feature, enabled); err != nil {
					return err
				}
				return printResult(cmd.OutOrStdout(), sf.json, map[string]any{"tenantId": id, "feature": feature, "enabled": enabled},
					fmt.Sprintf("%s: %s=%t", id, feature, enabled))
			})
		},
	}
	sf.register(setFeature)
	setFeature.Flags().StringVar(&tenant, "tenant", "", "tenant id (required)")
	setFeature.Flags().StringVar(&feature, "feature", "content_search", "feature flag name")
	setFeature.Flags().BoolVar(&enabled, "enabled", true, "whether the feature is on")
	cmd.AddCommand(create, setFeature)
	return cmd
}

func newUsersCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "users", Short: "Administer users"}
	var f adminFlags
	var email, password, tenant string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a user in a tenant and print its id",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tenantID, err := uuid.Parse(tenant)
			if err != nil {
				return usageError{fmt.Errorf("--tenant %q: not a tenant id", tenant)}
			}
			if email == "" || password == "" {
				return usageError{errors.New("--email and --password are required")}
			}
			return withAuth(cmd.Context(), f.dataDir, func(svc *auth.Service) error {
				u, err := svc.CreateUser(cmd.Context(), tenantID, email, password)
				if err != nil {
					return err
				}
				return printResult(cmd.OutOrStdout(), f.json, map[string]any{
					"id": u.ID, "email": u.Email, "tenantId": u.TenantID, "createdAt": u.CreatedAt.Format(time.RFC3339),
				}, u.ID.String())
			})
		},
	}
	f.register(create)
	create.Flags().StringVar(&email, "email", "", "email address (required)")
	create.Flags().StringVar(&password, "password", "", "password, 6 to 72 bytes (required)")
	create.Flags().StringVar(&tenant, "tenant", "", "tenant id (required)")
	cmd.AddCommand(create)
	return cmd
}

func newKeysCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Administer access-token signing keys"}
	var f adminFlags
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Add a new signing key; older keys stay published until their last token expires",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAuth(cmd.Context(), f.dataDir, func(svc *auth.Service) error {
				now := time.Now()
				keep := auth.RetentionAfterRotation(time.Hour, 30*time.Second)
				kid, err := svc.RotateKeys(cmd.Context(), now, keep)
				if err != nil {
					return err
				}
				return printResult(cmd.OutOrStdout(), f.json, map[string]any{
					"kid": kid, "previousKeysRetireAt": now.Add(keep).UTC().Format(time.RFC3339),
				}, kid)
			})
		},
	}
	f.register(rotate)
	cmd.AddCommand(rotate)
	return cmd
}
