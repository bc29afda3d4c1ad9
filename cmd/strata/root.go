package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envPrefix is the prefix of environment variables that set flags:
// --data-dir is STRATA_DATA_DIR.
const envPrefix = "STRATA_"

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "strata",
		Short:         "Strata: data platform, authentication and content API in one service",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return applyEnv(cmd.Flags())
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newServeCommand(), newTenantsCommand(), newUsersCommand(), newKeysCommand(), newConformanceCommand(),
		newLoginCommand(), newQueryCommand(), newSchemaCommand(), newSyncCommand(),
		newConnectorsCommand(), newNotesCommand(), newVoiceCommand(), newEventsCommand())
	return root
}

// envName returns the environment variable for a flag name.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its STRATA_*
// environment variable, if that is set. Flags win over the environment.
func applyEnv(flags *pflag.FlagSet) error {
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if setErr := flags.Set(f.Name, v); setErr != nil {
				err = usageError{fmt.Errorf("%s: %w", envName(f.Name), setErr)}
			}
		}
	})
	return err
}
