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

	code, id, errOut := strata(t, "notes", "add", "--title", "Groceries", "milk, eggs and bread")
	if code != exitOK || len(strings.TrimSpace(id)) != 36 {
		t.Fatalf("notes add: %d %q %q", code, id, errOut)
	}
	code, out, _ = strata(t, "notes", "list", "--q", "eggs")
	if code != exitOK || !strings.Contains(out, strings.TrimSpace(id)) || !strings.Contains(out, "Groceries") {
		t.Fatalf("notes list: %d %q", code, out)
	}
	code, out, _ = strata(t, "notes", "show", strings.TrimSpace(id))
	if code != exitOK || !strings.Contains(out, `"body": "milk, eggs and bread"`) {
		t.Fatalf("notes show: %d %q", code, out)
	}
	if code, _, _ := strata(t, "notes", "show", "nope"); code != exitUsage {
		t.Fatalf("notes show nope: %d", code)
	}
	if code, _, errOut := strata(t, "notes", "show", "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"); code != exitFailure || !strings.Contains(errOut, "not_found") {
		t.Fatalf("notes show unknown: %d %q", code, errOut)
	}
	if code, _, errOut := strata(t, "connectors", "create", "--name", "x", "--type", "relational_pg"); code != exitFailure || !strings.Contains(errOut, "connector_type_unavailable") {
		t.Fatalf("connectors create coming-soon: %d %q", code, errOut)
	}
	if code, out, _ := strata(t, "connectors", "list"); code != exitOK || out != "" {
		t.Fatalf("connectors list: %d %q", code, out)
	}
	audio := filepath.Join(t.TempDir(), "a.txt")
	_ = os.WriteFile(audio, []byte("not audio"), 0o600)
	if code, _, errOut := strata(t, "voice", "upload", audio); code != exitFailure || !strings.Contains(errOut, "unsupported_media_type") {
		t.Fatalf("voice upload of text: %d %q", code, errOut)
	}
}
