package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/stratahq/strata/sdk"
)

// storedSession is what `strata login` keeps in the user's config dir
// (mode 0600): the base URL and the newest refresh token.
type storedSession struct {
	BaseURL      string `json:"baseUrl"`
	Email        string `json:"email"`
	RefreshToken string `json:"refreshToken"`
}

// sessionPath is $XDG_CONFIG_HOME/strata/session.json (or the OS's config dir);
// STRATA_CONFIG_DIR overrides it (tests).
func sessionPath() (string, error) {
	dir := os.Getenv("STRATA_CONFIG_DIR")
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "strata")
	}
	return filepath.Join(dir, "session.json"), nil
}

func saveSession(s storedSession) error {
	path, err := sessionPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path) // atomic: a crash never leaves half a session
}

func loadSession() (storedSession, error) {
	var s storedSession
	path, err := sessionPath()
	if err != nil {
		return s, err
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, usageError{errors.New("not logged in: run strata login first")}
	}
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(raw, &s)
}

// clientFlags are shared by the client commands.
type clientFlags struct {
	baseURL string
	json    bool
}

func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.baseURL, "base-url", "", "server base URL (default: the one of strata login)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
}

// connect builds an SDK client from the stored session; each rotated
// refresh token is saved again.
func (f *clientFlags) connect() (*sdk.Client, error) {
	s, err := loadSession()
	if err != nil {
		return nil, err
	}
	if f.baseURL != "" && strings.TrimRight(f.baseURL, "/") != strings.TrimRight(s.BaseURL, "/") {
		return nil, usageError{fmt.Errorf("logged in to %s, not %s: run strata login --base-url %s", s.BaseURL, f.baseURL, f.baseURL)}
	}
	return sdk.New(s.BaseURL, sdk.WithRefreshToken(s.RefreshToken), sdk.WithSessionCallback(func(sess sdk.Session) {
		s.RefreshToken = sess.RefreshToken
		_ = saveSession(s)
	}))
}

// apiFailure marks an error the server answered (exit code 1, message as is).
func apiFailure(err error) error { return err }

func newLoginCommand() *cobra.Command {
	var baseURL, email, password string
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Sign in and keep the session in the user's config dir",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if email == "" {
				return usageError{errors.New("--email is required")}
			}
			if password == "" {
				password = os.Getenv("STRATA_PASSWORD")
			}
			if password == "" {
				if !term.IsTerminal(int(os.Stdin.Fd())) {
					return usageError{errors.New("--password (or STRATA_PASSWORD) is required without a terminal")}
				}
				fmt.Fprint(cmd.ErrOrStderr(), "Password: ")
				raw, err := term.ReadPassword(int(os.Stdin.Fd()))
				fmt.Fprintln(cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				password = string(raw)
			}
			stored := storedSession{BaseURL: strings.TrimRight(baseURL, "/"), Email: email}
			var saveErr error
			c, err := sdk.New(stored.BaseURL, sdk.WithPassword(email, password), sdk.WithSessionCallback(func(s sdk.Session) {
				stored.RefreshToken = s.RefreshToken
				saveErr = saveSession(stored)
			}))
			if err != nil {
				return usageError{err}
			}
			if err := c.Login(cmd.Context()); err != nil {
				return apiFailure(err)
			}
			if saveErr != nil {
				return saveErr
			}
			user, err := c.User(cmd.Context())
			if err != nil {
				return apiFailure(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Logged in to %s as %s (tenant %s)\n", stored.BaseURL, user.Email, user.AppMetadata.TenantID)
			return nil
		},
	}
	cmd.Flags().StringVar(&baseURL, "base-url", "http://127.0.0.1:8080", "server base URL")
	cmd.Flags().StringVar(&email, "email", "", "email (required)")
	cmd.Flags().StringVar(&password, "password", "", "password (default: $STRATA_PASSWORD, else asked)")
	return cmd
}

func newQueryCommand() *cobra.Command {
	var f clientFlags
	var format string
	var maxRows int
	cmd := &cobra.Command{
		Use:   "query SQL",
		Short: "Run a read-only SQL query on the tenant's store",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("want exactly one SQL argument")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.json {
				format = "json"
			}
			if format != "table" && format != "json" && format != "csv" {
				return usageError{fmt.Errorf("--format %q: want table, json or csv", format)}
			}
			c, err := f.connect()
			if err != nil {
				return err
			}
			res, err := c.Query(cmd.Context(), args[0], nil, sdk.MaxRows(maxRows))
			if err != nil {
				return apiFailure(err)
			}
			return printQueryResult(cmd.OutOrStdout(), format, res)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "output: table, json or csv")
	cmd.Flags().IntVar(&maxRows, "max-rows", 10000, "at most this many rows (0 to 100000)")
	return cmd
}

// cell renders one value for table and CSV output.
func cell(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	default:
		raw, _ := json.Marshal(t)
		return string(raw)
	}
}

func printQueryResult(w io.Writer, format string, res *sdk.QueryResult) error {
	names := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		names[i] = c.Name
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write(names)
		for _, row := range res.Rows {
			rec := make([]string, len(names))
			for i, n := range names {
				rec[i] = cell(row[n])
			}
			_ = cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	}
	// An aligned table, as psql prints it: the separator line is dashes
	// across each column's full width, joined by "+".
	table := make([][]string, 0, len(res.Rows)+1)
	table = append(table, names)
	for _, row := range res.Rows {
		vals := make([]string, len(names))
		for i, n := range names {
			vals[i] = cell(row[n])
		}
		table = append(table, vals)
	}
	widths := make([]int, len(names))
	for _, vals := range table {
		for i, v := range vals {
			widths[i] = max(widths[i], utf8.RuneCountInString(v))
		}
	}
	line := func(vals []string) string {
		var b strings.Builder
		for i, v := range vals {
			if i > 0 {
				b.WriteString(" |")
			}
			b.WriteString(" " + v)
			if i < len(vals)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(v)))
			}
		}
		return b.String()
	}
	seps := make([]string, len(names))
	for i, w := range widths {
		seps[i] = strings.Repeat("-", w+2)
	}
	var out strings.Builder
	out.WriteString(line(names) + "\n" + strings.Join(seps, "+") + "\n")
	for _, vals := range table[1:] {
		out.WriteString(line(vals) + "\n")
	}
	if _, err := io.WriteString(w, out.String()); err != nil {
		return err
	}
	suffix := ""
	if res.Truncated {
		suffix = ", truncated"
	}
	noun := "rows"
	if res.RowCount == 1 {
		noun = "row"
	}
	_, err := fmt.Fprintf(w, "(%d %s%s, %.1f ms)\n", res.RowCount, noun, suffix, res.ExecutionTimeMs)
	return err
}

func newSchemaCommand() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "List the tenant's tables with their columns and row counts",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.connect()
			if err != nil {
				return err
			}
			tables, err := c.Schema(cmd.Context())
			if err != nil {
				return apiFailure(err)
			}
			if f.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(tables)
			}
			sort.Slice(tables, func(i, j int) bool { return tables[i].Name < tables[j].Name })
			for _, t := range tables {
				cols := make([]string, len(t.Columns))
				for i, col := range t.Columns {
					cols[i] = col.Name + " " + col.Type
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s (%d rows): %s\n", t.Name, t.RowCount, strings.Join(cols, ", "))
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func newSyncCommand() *cobra.Command {
	var f clientFlags
	var wait bool
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Start a sync of all enabled connectors (--wait follows it to the end)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.connect()
			if err != nil {
				return err
			}
			started, err := c.Sync(cmd.Context())
			if err != nil {
				return apiFailure(err)
			}
			out := cmd.OutOrStdout()
			if !wait {
				if f.json {
					return json.NewEncoder(out).Encode(started)
				}
				fmt.Fprintf(out, "sync %s %s\n", started.JobID, started.Status)
				return nil
			}
			tty := isTerminal(out)
			job, err := c.WaitSync(cmd.Context(), started.JobID, func(j sdk.SyncJob) {
				if f.json {
					return
				}
				fmt.Fprint(out, progressLine(j, tty))
			})
			if tty && !f.json {
				fmt.Fprintln(out)
			}
			if f.json {
				_ = json.NewEncoder(out).Encode(job)
			}
			if err != nil {
				return apiFailure(err)
			}
			if !f.json {
				fmt.Fprintf(out, "sync %s %s\n", job.JobID, job.Status)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the sync ends, showing its progress")
	return cmd
}

// progressLine renders a job's progress: a bar redrawn in place on a
// terminal, one plain line per change otherwise.
func progressLine(j sdk.SyncJob, tty bool) string {
	connector, rows := "", int64(0)
	if j.Connectors != nil {
		for _, c := range *j.Connectors {
			rows += c.Rows
			if c.Status == "running" {
				connector = c.Name
			}
		}
	}
	if !tty {
		return fmt.Sprintf("%s %5.1f%% %s rows=%d\n", j.Status, j.Progress, connector, rows)
	}
	const width = 30
	filled := int(j.Progress / 100 * width)
	return fmt.Sprintf("\r[%s%s] %5.1f%% %-20.20s %d rows", strings.Repeat("#", filled), strings.Repeat(".", width-filled), j.Progress, connector, rows)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
