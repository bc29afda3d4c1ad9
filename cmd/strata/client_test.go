package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/testenv"
)

// TestClientCommands drives login, query, schema and sync against a real
// in-process server. (Not parallel: it sets STRATA_CONFIG_DIR.)
func TestClientCommands(t *testing.T) {
	e := testenv.New(t, nil)
	e.User("cli@example.com", "correct horse", principal.TierPro)
	config := t.TempDir()
	t.Setenv("STRATA_CONFIG_DIR", config)

	if code, _, errOut := strata(t, "query", "SELECT 1"); code != exitUsage || !strings.Contains(errOut, "strata login") {
		t.Fatalf("query before login: %d %q", code, errOut)
	}
	code, out, errOut := strata(t, "login", "--base-url", e.Srv.URL, "--email", "cli@example.com", "--password", "correct horse")
	if code != exitOK || !strings.Contains(out, "Logged in") {
		t.Fatalf("login: %d %q %q", code, out, errOut)
	}
	info, err := os.Stat(filepath.Join(config, "session.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("session file: %v %v", info, err)
	}
	if raw, _ := os.ReadFile(filepath.Join(config, "session.json")); strings.Contains(string(raw), "correct horse") {
		t.Fatal("the password was stored")
	}
	if code, _, _ := strata(t, "login", "--base-url", e.Srv.URL, "--email", "cli@example.com", "--password", "wrong"); code != exitFailure {
		t.Fatalf("wrong password: exit %d, want 1", code)
	}

	code, out, errOut = strata(t, "query", "SELECT 42 AS answer, 'x' AS label UNION ALL SELECT 7, NULL ORDER BY 1")
	if code != exitOK || !strings.Contains(out, "answer | label") || !strings.Contains(out, "42     | x") || !strings.Contains(out, "(2 rows") {
		t.Fatalf("query table: %d\n%s%s", code, out, errOut)
	}
	code, out, _ = strata(t, "query", "--format", "csv", "SELECT 1 AS a, 2 AS b")
	if code != exitOK || out != "a,b\n1,2\n" {
		t.Fatalf("query csv: %d %q", code, out)
	}
	code, out, _ = strata(t, "query", "--json", "SELECT 1 AS a")
	var res struct{ RowCount int }
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || res.RowCount != 1 {
		t.Fatalf("query json: %d %q", code, out)
	}
	if code, _, errOut := strata(t, "query", "DROP TABLE x"); code != exitFailure || !strings.Contains(errOut, "permission_denied") {
		t.Fatalf("write query: %d %q", code, errOut)
	}
	if code, _, _ := strata(t, "query", "--format", "xml", "SELECT 1"); code != exitUsage {
		t.Fatalf("bad format: %d", code)
	}
	if code, out, _ := strata(t, "schema"); code != exitOK || out != "" {
		t.Fatalf("schema of an empty store: %d %q", code, out)
	}
	code, out, errOut = strata(t, "sync", "--wait")
	if code != exitOK || !strings.Contains(out, "completed") {
		t.Fatalf("sync --wait: %d %q %q", code, out, errOut)
	}
}
