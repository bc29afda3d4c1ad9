package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/stratahq/strata/conformance"
)

func newConformanceCommand() *cobra.Command {
	var cfg conformance.Config
	var junit string
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Check a live server against openapi.yaml and the spec (exit 1 on any failure)",
		Long: "Runs the black-box conformance suite against --base-url: every response is validated against\n" +
			"the OpenAPI document, every operation must be exercised, and the checks cover errors, auth flows,\n" +
			"the query guard, connectors, syncs, content and events. --email/--password name an existing user;\n" +
			"--hosted-backend-url and --service-role-key add a real sync of a hosted backend, compared table by table\n" +
			"with what the backend serves. The expiry checks wait up to --max-expiry-wait for tokens to expire; tell\n" +
			"them the server's lifetimes when it runs with other than the spec's (--access-token-ttl and so on).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.BaseURL == "" || cfg.Email == "" || cfg.Password == "" {
				return usageError{errors.New("--base-url, --email and --password are required")}
			}
			suite, err := conformance.New(cmd.Context(), cfg)
			if err != nil {
				return usageError{err}
			}
			report := suite.Run(cmd.Context(), conformance.Checks())
			report.WriteText(cmd.OutOrStdout())
			if junit != "" {
				f, err := os.Create(junit)
				if err != nil {
					return err
				}
				if err := report.WriteJUnit(f); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			if report.Failed() {
				return fmt.Errorf("conformance failed")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.BaseURL, "base-url", "", "base URL of the server under test (required)")
	f.StringVar(&cfg.Email, "email", "", "email of an existing user (required)")
	f.StringVar(&cfg.Password, "password", "", "that user's password (required)")
	f.StringVar(&cfg.HostedBackendURL, "hosted-backend-url", "", "a hosted backend to sync in the sync check (optional)")
	f.StringVar(&cfg.ServiceRoleKey, "service-role-key", "", "its service-role key")
	f.DurationVar(&cfg.AccessTokenTTL, "access-token-ttl", conformance.DefaultAccessTokenTTL, "the server's access-token lifetime (its --access-token-ttl): expires_in must equal it")
	f.DurationVar(&cfg.RefreshTokenTTL, "refresh-token-ttl", conformance.DefaultRefreshTokenTTL, "the server's refresh-token lifetime (its --refresh-token-ttl)")
	f.DurationVar(&cfg.TokenLeeway, "token-leeway", conformance.DefaultTokenLeeway, "the most the server may accept an access token past its exp (its --token-leeway)")
	f.DurationVar(&cfg.MaxExpiryWait, "max-expiry-wait", conformance.DefaultMaxExpiryWait, "longest an expiry check waits for a token to expire; a longer lifetime is noted in the report, not observed")
	f.StringVar(&junit, "junit", "", "also write a JUnit XML report to this file")
	return cmd
}
