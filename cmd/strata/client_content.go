package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/stratahq/strata/sdk"
)

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

func newConnectorsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "connectors", Short: "Manage data-source connectors"}
	var f clientFlags
	list := &cobra.Command{Use: "list", Short: "List connectors (secrets masked)", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.connect()
			if err != nil {
				return err
			}
			conns, err := c.Connectors(cmd.Context())
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), conns)
			}
			for _, k := range conns {
				fmt.Fprintf(cmd.OutOrStdout(), "%s  %-16s %-20s enabled=%t\n", k.ID, k.Type, k.Name, k.Enabled)
			}
			return nil
		}}
	f.register(list)

	var cf clientFlags
	var name, typ, config string
	create := &cobra.Command{Use: "create", Short: "Create a connector: --name N --type T --config '{…}'", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cfg map[string]any
			if err := json.Unmarshal([]byte(config), &cfg); err != nil {
				return usageError{fmt.Errorf("--config: %v", err)}
			}
			c, err := cf.connect()
			if err != nil {
				return err
			}
			k, err := c.CreateConnector(cmd.Context(), sdk.ConnectorCreate{Name: name, Type: typ, Config: cfg})
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), k)
			}
			fmt.Fprintln(cmd.OutOrStdout(), k.ID)
			return nil
		}}
	cf.register(create)
	create.Flags().StringVar(&name, "name", "", "display name")
	create.Flags().StringVar(&typ, "type", "hosted_backend", "connector type")
	create.Flags().StringVar(&config, "config", "{}", "configuration as a JSON object")

	var uf clientFlags
	var patch string
	update := &cobra.Command{Use: "update ID --patch '{…}'", Short: "Update a connector with a JSON merge patch", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var u sdk.ConnectorUpdate
			if err := json.Unmarshal([]byte(patch), &u); err != nil {
				return usageError{fmt.Errorf("--patch: %v", err)}
			}
			c, err := uf.connect()
			if err != nil {
				return err
			}
			k, err := c.UpdateConnector(cmd.Context(), args[0], u)
			if err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), k)
		}}
	uf.register(update)
	update.Flags().StringVar(&patch, "patch", "{}", `merge patch, e.g. {"enabled":false,"config":{"sync_interval_seconds":600}}`)

	var df clientFlags
	del := &cobra.Command{Use: "delete ID", Short: "Delete a connector (its tables stay)", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := df.connect()
			if err != nil {
				return err
			}
			return c.DeleteConnector(cmd.Context(), args[0])
		}}
	df.register(del)
	cmd.AddCommand(list, create, update, del)
	return cmd
}

func newNotesCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "notes", Short: "Add, list and show content items"}
	var af clientFlags
	var title string
	add := &cobra.Command{Use: "add BODY", Short: "Add a note", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := af.connect()
			if err != nil {
				return err
			}
			n := sdk.NoteCreate{Body: args[0]}
			if title != "" {
				n.Title = &title
			}
			it, err := c.CreateNote(cmd.Context(), n)
			if err != nil {
				return err
			}
			if af.json {
				return printJSON(cmd.OutOrStdout(), it)
			}
			fmt.Fprintln(cmd.OutOrStdout(), it.ID)
			return nil
		}}
	af.register(add)
	add.Flags().StringVar(&title, "title", "", "title (default: the body's first line)")

	var lf clientFlags
	var query string
	var limit int
	list := &cobra.Command{Use: "list", Short: "List items, newest first", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := lf.connect()
			if err != nil {
				return err
			}
			n := 0
			for it, err := range c.Items(cmd.Context(), sdk.ListOptions{Query: query}) {
				if err != nil {
					return err
				}
				if lf.json {
					if err := json.NewEncoder(cmd.OutOrStdout()).Encode(it); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "%s  %-10s %-10s %s\n", it.ID, it.Type, it.ProcessingStatus, it.Title)
				}
				if n++; n >= limit {
					break
				}
			}
			return nil
		}}
	lf.register(list)
	list.Flags().StringVar(&query, "q", "", "substring to look for")
	list.Flags().IntVar(&limit, "limit", 50, "at most this many items")

	var sf clientFlags
	show := &cobra.Command{Use: "show ID", Short: "Show one item", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := uuid.Parse(args[0])
			if err != nil {
				return usageError{fmt.Errorf("%q is not an item id", args[0])}
			}
			c, err := sf.connect()
			if err != nil {
				return err
			}
			it, err := c.GetItem(cmd.Context(), id)
			if err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), it)
		}}
	sf.register(show)
	cmd.AddCommand(add, list, show)
	return cmd
}

func newVoiceCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "voice", Short: "Voice notes"}
	var f clientFlags
	var wait bool
	var title string
	upload := &cobra.Command{Use: "upload FILE", Short: "Upload an audio file (wav, mp3, ogg, webm, m4a); --wait for its transcript", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := os.Open(args[0])
			if err != nil {
				return usageError{err}
			}
			defer file.Close()
			c, err := f.connect()
			if err != nil {
				return err
			}
			var opts []sdk.UploadOption
			if title != "" {
				opts = append(opts, sdk.UploadTitle(title))
			}
			it, err := c.UploadVoiceNote(cmd.Context(), file, filepath.Base(args[0]), opts...)
			if err != nil {
				return err
			}
			for wait && (it.ProcessingStatus == sdk.ProcessingStatusPending || it.ProcessingStatus == sdk.ProcessingStatusProcessing) {
				select {
				case <-cmd.Context().Done():
					return cmd.Context().Err()
				case <-time.After(500 * time.Millisecond): // polling interval
				}
				if it, err = c.GetItem(cmd.Context(), it.ID); err != nil {
					return err
				}
			}
			if f.json || wait {
				return printJSON(cmd.OutOrStdout(), it)
			}
			fmt.Fprintln(cmd.OutOrStdout(), it.ID)
			return nil
		}}
	f.register(upload)
	upload.Flags().BoolVar(&wait, "wait", false, "wait until it is transcribed and processed")
	upload.Flags().StringVar(&title, "title", "", "title (default: the transcript's first words)")
	cmd.AddCommand(upload)
	return cmd
}

func newEventsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "events", Short: "Content change events"}
	var f clientFlags
	var since string
	var limit int
	tail := &cobra.Command{Use: "tail", Short: "Print change events as they happen (one JSON object a line)",
		Long: "Print the user's change events as they happen, one JSON object a line on stdout, until interrupted\n" +
			"(or, with --limit N, until N events were printed). Once the stream is open, a line saying so goes\n" +
			"to stderr: events from then on are printed.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usageError{fmt.Errorf("--limit %d: want 0 (no limit) or more", limit)}
			}
			c, err := f.connect()
			if err != nil {
				return err
			}
			// Stop the stream when the command returns, not only on interrupt:
			// --limit ends the command while the stream is still open.
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			events, err := c.Events(ctx, sdk.EventsOptions{Since: since})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "strata: listening for events (interrupt to stop)")
			enc := json.NewEncoder(cmd.OutOrStdout())
			n := 0
			for ev := range events {
				if ev.Err != nil {
					return ev.Err
				}
				if err := enc.Encode(map[string]any{"type": ev.Type, "id": ev.ID, "at": ev.At, "item": ev.Item}); err != nil {
					return err
				}
				if n++; limit > 0 && n >= limit {
					return nil
				}
			}
			return nil // the channel closes when the command is interrupted
		}}
	f.register(tail)
	tail.Flags().StringVar(&since, "since", "", "replay events after this event id first")
	tail.Flags().IntVar(&limit, "limit", 0, "exit after printing this many events (0: run until interrupted)")
	cmd.AddCommand(tail)
	return cmd
}
