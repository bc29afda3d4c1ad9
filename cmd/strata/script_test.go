package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/testenv"
)

// update rewrites the golden files of testdata/script when a cmp fails:
// go test ./cmd/strata -run TestScripts -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/script/*.txtar")

// Credentials of the user every script's server has.
const (
	scriptEmail    = "cli@example.com"
	scriptPassword = "correct horse battery"
)

// TestScripts runs the CLI scripts in testdata/script: each gets its own
// real in-process server (impl/testenv) with one pro-tier user, and the
// real strata main as its strata command. The script's environment has
// BASE_URL, EMAIL, PASSWORD and STRATA_CONFIG_DIR (a fresh dir in $WORK,
// so the session file is the script's own).
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: *update,
		Setup:         setupScript,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
			"replace":  cmdReplace,
			"envfrom":  cmdEnvFrom,
		},
	})
}

// setupScript starts the script's server and sets its environment.
func setupScript(env *testscript.Env) error {
	tb, ok := env.T().(testing.TB)
	if !ok {
		return fmt.Errorf("testscript gave a %T, not a testing.TB", env.T())
	}
	e := testenv.New(tb, nil)
	e.User(scriptEmail, scriptPassword, principal.TierPro)
	env.Setenv("BASE_URL", e.Srv.URL)
	env.Setenv("EMAIL", scriptEmail)
	env.Setenv("PASSWORD", scriptPassword)
	env.Setenv("STRATA_CONFIG_DIR", filepath.Join(env.WorkDir, "config"))
	return nil
}

// cmdExitCode is `exitcode N program [args...]`: it runs the program like
// exec and fails unless it exits with status N. testscript's `! exec` only
// tells success from failure, and the CLI promises 1 for an API error and 2
// for a usage error. The program's stdout and stderr are kept for the
// stdout and stderr commands.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = exit.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdReplace is `replace FILE REGEXP REPLACEMENT`: it rewrites FILE in
// place with every match of REGEXP replaced (regexp.ReplaceAllString, so
// $1 works). Scripts use it to blank out what changes from run to run —
// execution times — before comparing output with a golden file.
func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE REGEXP REPLACEMENT")
	}
	re, err := regexp.Compile(args[1])
	if err != nil {
		ts.Fatalf("replace: %v", err)
	}
	path := ts.MkAbs(args[0])
	ts.Check(os.WriteFile(path, []byte(re.ReplaceAllString(ts.ReadFile(args[0]), args[2])), 0o666))
}

// cmdEnvFrom is `envfrom NAME FILE`: it sets the variable NAME to the
// content of FILE (stdout and stderr name the last command's output), with
// the surrounding white space trimmed, so a later command can use an id an
// earlier one printed.
func cmdEnvFrom(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfrom NAME FILE")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
}
