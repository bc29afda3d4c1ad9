// Command strata is the Strata service and its tools in one binary:
// `strata serve` runs the server; the other subcommands administer it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes: 0 ok, 1 failure, 2 usage.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code. SIGINT
// and SIGTERM cancel the context that commands run under.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		// SDK errors already start with "strata: " (its package name).
		msg := err.Error()
		if !strings.HasPrefix(msg, "strata: ") {
			msg = "strata: " + msg
		}
		fmt.Fprintln(stderr, msg)
		var u usageError
		// cobra reports an unknown subcommand only as text.
		if errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command") {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

// usageError marks an error caused by how the command was invoked.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// noArgs is cobra.NoArgs reporting a usage error (exit code 2).
func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return usageError{err}
	}
	return nil
}
